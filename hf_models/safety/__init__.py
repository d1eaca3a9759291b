"""What every command line does before and around its work, so that nothing is lost: refuse a used output folder
(as run_clm.py, unless the user allows it), never write over one of its own inputs or through a link, write each
file in one step, check numeric flags where they are parsed, and turn the user's errors into one line
(`error: ...`, exit status 2) while a real bug keeps its traceback.

- `errors`: `command_line`, the one-line errors, and `reading`, which names the file a library's load failed on;
- `outputs`: the output folder and output files, checked against the inputs;
- `ranges`: the ranges of numeric flags, and path flags given as empty strings;
- `atomic`: `staged_save` (one save, file by file in one step each), `restoring_on_failure` (several writes, the
  folder as it was if they fail) and `removing_what_fails` (several writes, what they added removed if they fail).
"""

from .atomic import removing_what_fails, restoring_on_failure, staged_save
from .errors import USER_ERRORS, check_json_files, command_line, describe_os_error, one_line, reading
from .outputs import (
    Inputs,
    check_checkpoint,
    check_count,
    check_not_input,
    check_output_dir,
    check_output_file,
    used_files,
)
from .ranges import Range, check_flag_ranges

__all__ = [
    "Inputs",
    "Range",
    "USER_ERRORS",
    "check_checkpoint",
    "check_count",
    "check_json_files",
    "check_flag_ranges",
    "check_not_input",
    "check_output_dir",
    "check_output_file",
    "command_line",
    "describe_os_error",
    "one_line",
    "reading",
    "restoring_on_failure",
    "removing_what_fails",
    "staged_save",
    "used_files",
]
