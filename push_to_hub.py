#!/usr/bin/env python
"""Share a trained `small-encoder` run on the Hugging Face Hub, with its code, tokenizer, model card and metrics.

    python push_to_hub.py RUN_DIR --repo_id USER/NAME [--private] [--revision R] [--commit_message M]
    python push_to_hub.py RUN_DIR --dry_run --local_dir OUT
    python push_to_hub.py RUN_DIR --repo_id USER/NAME --space USER/APP [--dry_run --local_dir OUT]

The run directory is exported into a staging folder: the weights, `config.json` (whose `auto_map` maps every head),
the configuration and modeling code the run saved (so that `trust_remote_code=True` loads it without `hf_models`),
the tokenizer files, the PNG plots, the run's `run_record.json` in its public form (no local paths; it says how a
birthplace model answers) and a `README.md` model card built from it. `--dry_run` writes that folder to OUT;
otherwise the same folder is staged in a temporary directory and uploaded with `HfApi.upload_folder`, restricted to
an allowlist of file names. The logic is in `hf_models.hub`.

`--space USER/APP` also publishes a Gradio Space that loads the model from `--repo_id`: the project's own app
(`recipes/app.py` and the `hf_models` package, byte for byte), a pinned `requirements.txt` and a README with the Space
metadata (`hf_models.app.space`). With `--dry_run`, OUT/model gets the model export and OUT/space the Space.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from hf_models.safety import command_line
from hf_models.training import HelpFormatter

PROG = Path(__file__).name  # as hf_models.hub.publish's PROG, which names this script in its messages


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument(
        "run_dir", type=Path, help="folder a recipe saved the model in (config.json, model.safetensors)"
    )
    parser.add_argument("--repo_id", help="USER/NAME of the model repository (required unless --dry_run)")
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--revision", help="branch to push to (created if missing); default: main")
    parser.add_argument("--commit_message", help="commit message (default: 'Upload RUN with push_to_hub.py')")
    parser.add_argument("--dry_run", action="store_true", help="write the folder that would be uploaded; no network")
    parser.add_argument("--local_dir", type=Path, help="with --dry_run: where to write the export")
    parser.add_argument("--overwrite", action="store_true", help="with --dry_run: replace a non-empty --local_dir")
    parser.add_argument(
        "--space", metavar="USER/APP", help="also publish a Gradio Space (hf_models.app) that loads --repo_id"
    )
    parser.add_argument("--language", help="ISO code for the card (default: the run record's language)")
    parser.add_argument("--license", help="license for the card (default: the card's own, apache-2.0)")
    parser.add_argument(
        "--birthplace",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="mark as a birthplace QA model (default: from the run record's task)",
    )
    args = parser.parse_args(argv)
    if args.dry_run and args.local_dir is None:
        parser.error("--dry_run needs --local_dir OUT")
    if not args.dry_run and not args.repo_id:
        parser.error("--repo_id USER/NAME is required (or use --dry_run --local_dir OUT)")
    if args.space and not args.repo_id:
        parser.error("--space needs --repo_id USER/NAME: the model repository the Space loads")
    return args


def _print_export(folder: Path, files: list[Path]) -> None:
    size = sum((folder / f).stat().st_size for f in files)
    print(f"{PROG}: wrote {len(files)} files ({size / 1e6:.1f} MB) to {folder}; nothing was uploaded")
    for rel in files:
        print(f"  {rel.as_posix()}")


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status: 0 on success, 2 with one line on stderr for the user's
    errors, 1 for the network's."""
    args = parse_args(argv)
    # Imported once the flags are accepted: -h and a refused flag answer without torch (the export reads weights).
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    from hf_models.app.space import export_space, publish_space
    from hf_models.hub import (
        CardOptions,
        PushError,
        endpoint,
        explain,
        export_folder,
        network_errors,
        one_line,
        upload,
    )

    chosen = {"license": args.license} if args.license else {}
    options = CardOptions(repo_id=args.repo_id, language=args.language, birthplace=args.birthplace, **chosen)
    try:
        for repo_id in filter(None, (args.repo_id, args.space)):
            validate_repo_id(repo_id)  # before any staging or network call
        if args.dry_run:
            model_dir = args.local_dir / "model" if args.space else args.local_dir
            result = export_folder(args.run_dir, model_dir, options, overwrite=args.overwrite)
            _print_export(result.folder, result.files)
            if args.space:
                space = export_space(args.run_dir, args.local_dir / "space", args.space, args.repo_id, args.overwrite)
                _print_export(space.folder, space.files)
            return 0
        url, n_files = upload(
            args.run_dir, options, private=args.private, revision=args.revision, commit_message=args.commit_message
        )
        print(f"{PROG}: uploaded {n_files} files from {args.run_dir} to {endpoint()}/{args.repo_id} ({url})")
        if args.space:
            url, n_files = publish_space(args.run_dir, args.space, args.repo_id, private=args.private)
            print(f"{PROG}: uploaded the app ({n_files} files) to the Space {endpoint()}/spaces/{args.space} ({url})")
        return 0
    except PushError as error:  # the user's to fix: status 2, as every command line
        print(f"error: {error}", file=sys.stderr)
        return 2
    except HFValidationError as error:
        print(f"error: invalid --repo_id: {one_line(error)}", file=sys.stderr)
        return 2
    except network_errors() as error:  # the network or the Hub: status 1
        print(f"error: {explain(error)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
