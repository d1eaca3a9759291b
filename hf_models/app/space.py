"""A Gradio Space for a shared model (`push_to_hub.py RUN --repo_id USER/MODEL --space USER/NAME`);
`hf_models.hub.publish` shares the model itself.

The Space runs the project's own app, not a copy of it:
- `app.py` is `recipes/app.py` byte for byte (a short launcher of `hf_models.app.main` under
  `safety.command_line`);
- `hf_models/` is this package's source, byte for byte, so that the launcher imports the code the app was tested
  with (no Git URL or wheel index to trust; the Space is a snapshot, as the model repository's remote code is);
- `app.json` names the model repository the app loads, as `recipes/app.py USER/MODEL` would;
- `requirements.txt` pins the third-party packages at the versions installed here (torch from its CPU index);
- `README.md` carries the Space metadata: `sdk: gradio`, `sdk_version` (the installed Gradio), `app_file: app.py`,
  `python_version`, and `models:` linking the model repository.

Each file is written in one step (`textio.atomic_write`): a failed export leaves no half-written one. The model
repository carries its public run record, which tells the app how a birthplace model answers.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass
from fnmatch import fnmatch
from importlib import metadata
from pathlib import Path

from huggingface_hub import SpaceCard, SpaceCardData

from ..hub.publish import PushError, _prepare_local_dir, copy_file, hub_client
from ..textio import atomic_write_text
from .arguments import APP_CONFIG_FILE

__all__ = ["SPACE_ALLOW_PATTERNS", "SpaceExport", "export_space", "publish_space", "space_requirements"]

PACKAGE_DIR = Path(__file__).resolve().parents[1]
LAUNCHER = PACKAGE_DIR.parent / "recipes" / "app.py"
# The distributions `hf_models` and its app import (pyproject's dependencies and the `app` extra).
SPACE_PACKAGES = (
    "torch transformers tokenizers datasets accelerate evaluate safetensors huggingface_hub matplotlib protobuf "
    "filelock jinja2 scipy gradio"
).split()
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PACKAGE_PATTERNS = ("*.py", "small_encoder/presets/*.json")
SPACE_ALLOW_PATTERNS = [
    "README.md",
    "app.py",
    APP_CONFIG_FILE,
    "requirements.txt",
    "hf_models/*.py",
    "hf_models/*.json",
]


@dataclass
class SpaceExport:
    folder: Path
    files: list[Path]
    allow_patterns: list[str]


def space_requirements() -> list[str]:
    """`requirements.txt` lines: each package pinned at the installed version (torch without its local tag)."""
    lines = [f"--extra-index-url {TORCH_CPU_INDEX}"]
    for name in SPACE_PACKAGES:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            extra = " (pip install -e '.[app]')" if name == "gradio" else ""
            raise PushError(f"{name} is not installed{extra}; the Space pins the versions installed here") from None
        lines.append(f"{name}=={version.split('+')[0]}")
    return lines


def package_files() -> list[Path]:
    """The package's source files (relative to `hf_models/`), as the Space ships them."""
    files = {
        path.relative_to(PACKAGE_DIR)
        for pattern in PACKAGE_PATTERNS
        for path in PACKAGE_DIR.rglob(pattern)
        if "__pycache__" not in path.parts
    }
    return sorted(files, key=lambda p: p.as_posix())


def build_space_card(space_id: str, model_repo_id: str, run_name: str) -> SpaceCard:
    """README.md with the Space metadata and a few lines on what the app shows."""
    data = SpaceCardData(
        title=space_id.split("/")[-1],
        sdk="gradio",
        sdk_version=metadata.version("gradio"),
        python_version=f"{sys.version_info.major}.{sys.version_info.minor}",
        app_file="app.py",
        license="apache-2.0",
        models=[model_repo_id],
        tags=["small-encoder"],
        emoji="🎓",
        colorFrom="indigo",
        colorTo="green",
        pinned=False,
        short_description="Try a small pretrained-then-transferred Transformer",
    )
    body = f"""# {data.title}

Try [{model_repo_id}](https://huggingface.co/{model_repo_id}) (exported from the run `{run_name}`) in the browser:

- **Birthplace:** ask where someone was born; the model's greedy answer, beside the London baseline.
- **Sentiment:** a review in, its label and probability out (for a classifier).
- **Attention:** any text in, one layer's and one head's attention out, as the model returns it with
  `output_attentions=True` (for a synthesizer, the softmax of its synthesized scores).

`app.py` and `hf_models/` are the project's own launcher and package, unchanged; `app.json` names the model.
"""
    return SpaceCard(f"---\n{data.to_yaml()}\n---\n\n{body}")


def export_space(
    run_dir: str | os.PathLike,
    local_dir: str | os.PathLike,
    space_id: str,
    model_repo_id: str,
    overwrite: bool = False,
) -> SpaceExport:
    """Write the Space folder (to an empty or new `local_dir`) for the model of `model_repo_id`."""
    local_dir = Path(local_dir)
    if not LAUNCHER.is_file():
        raise PushError(f"{LAUNCHER} not found: run push_to_hub.py --space from a checkout of the project")
    requirements = space_requirements()
    _prepare_local_dir(local_dir, Path(run_dir), overwrite)
    copy_file(LAUNCHER, local_dir / "app.py")
    for rel in package_files():
        copy_file(PACKAGE_DIR / rel, local_dir / "hf_models" / rel)
    label = Path(run_dir).resolve().name
    atomic_write_text(
        local_dir / APP_CONFIG_FILE, json.dumps({"models": [f"{label}={model_repo_id}"]}, indent=2) + "\n"
    )
    atomic_write_text(local_dir / "requirements.txt", "\n".join(requirements) + "\n")
    atomic_write_text(local_dir / "README.md", str(build_space_card(space_id, model_repo_id, label)))
    files = sorted((p.relative_to(local_dir) for p in local_dir.rglob("*") if p.is_file()), key=lambda p: p.as_posix())
    refused = [f for f in files if not any(fnmatch(f.as_posix(), pattern) for pattern in SPACE_ALLOW_PATTERNS)]
    if refused:
        raise PushError(f"internal error: Space files outside the allowlist: {', '.join(map(str, refused))}")
    return SpaceExport(local_dir, files, list(SPACE_ALLOW_PATTERNS))


def publish_space(
    run_dir: str | os.PathLike,
    space_id: str,
    model_repo_id: str,
    *,
    private: bool = False,
    commit_message: str | None = None,
) -> tuple[str, int]:
    """Stage the Space in a temporary folder, create the Gradio Space if missing and upload it; returns (commit URL,
    number of files). Raises PushError for what the user must fix, and the Hub client's errors for the network."""
    api = hub_client()
    with tempfile.TemporaryDirectory(prefix="push_to_hub-space-") as tmp:
        export = export_space(run_dir, Path(tmp) / "space", space_id, model_repo_id)
        api.create_repo(
            repo_id=space_id, repo_type="space", space_sdk="gradio", private=private or None, exist_ok=True
        )
        info = api.upload_folder(
            repo_id=space_id,
            repo_type="space",
            folder_path=str(export.folder),
            commit_message=commit_message or f"Upload the app for {model_repo_id} with push_to_hub.py --space",
            allow_patterns=export.allow_patterns,
        )
    return str(getattr(info, "commit_url", None) or space_id), len(export.files)
