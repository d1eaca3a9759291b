#!/usr/bin/env python
"""Share a trained `small-encoder` run on the Hugging Face Hub, with its code, tokenizer, model card and metrics.

    python push_to_hub.py RUN_DIR --repo_id USER/NAME [--private] [--revision R] [--commit_message M]
    python push_to_hub.py RUN_DIR --dry_run --local_dir OUT

The run directory is exported into a staging folder: the weights, `config.json` (whose `auto_map` maps every head),
the configuration and modeling code the run saved (so that `trust_remote_code=True` loads it without `hf_models`),
the tokenizer files, the PNG plots and a `README.md` model card built from the run's `run_record.json`. `--dry_run`
writes that folder to OUT; otherwise the same folder is staged in a temporary directory and uploaded with
`HfApi.upload_folder`, restricted to an allowlist of file names. The logic is in `hf_models.hub`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id

from hf_models.hub import (
    DEFAULT_LICENSE,
    PROG,
    CardOptions,
    PushError,
    endpoint,
    explain,
    export_folder,
    network_errors,
    one_line,
    upload,
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Share a trained small-encoder run on the Hugging Face Hub (code, tokenizer, card, metrics).",
    )
    parser.add_argument("run_dir", type=Path, help="folder a recipe saved the model in (config.json, model.safetensors)")
    parser.add_argument("--repo_id", help="USER/NAME of the model repository (required unless --dry_run)")
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--revision", help="branch to push to (created if missing); default: main")
    parser.add_argument("--commit_message", help="commit message (default: 'Upload RUN with push_to_hub.py')")
    parser.add_argument("--dry_run", action="store_true", help="write the folder that would be uploaded; no network")
    parser.add_argument("--local_dir", type=Path, help="with --dry_run: where to write the export")
    parser.add_argument("--overwrite", action="store_true", help="with --dry_run: replace a non-empty --local_dir")
    parser.add_argument("--language", help="ISO code for the card (default: the run record's language)")
    parser.add_argument("--license", default=DEFAULT_LICENSE, help=f"license for the card (default: {DEFAULT_LICENSE})")
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
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status: 0 on success, 2 with one line on stderr for the user's
    errors, 1 for the network's."""
    args = parse_args(argv)
    options = CardOptions(repo_id=args.repo_id, language=args.language, license=args.license, birthplace=args.birthplace)
    try:
        if args.repo_id:
            validate_repo_id(args.repo_id)  # before any staging or network call
        if args.dry_run:
            result = export_folder(args.run_dir, args.local_dir, options, overwrite=args.overwrite)
            size = sum((result.folder / f).stat().st_size for f in result.files)
            print(f"{PROG}: wrote {len(result.files)} files ({size / 1e6:.1f} MB) to {result.folder}; nothing was uploaded")
            for rel in result.files:
                print(f"  {rel.as_posix()}")
            return 0
        url, n_files = upload(
            args.run_dir, options, private=args.private, revision=args.revision, commit_message=args.commit_message
        )
        print(f"{PROG}: uploaded {n_files} files from {args.run_dir} to {endpoint()}/{args.repo_id} ({url})")
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
    sys.exit(main())
