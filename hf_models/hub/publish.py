"""Share a run folder on the Hugging Face Hub: the export (weights, config, remote code, tokenizer, plots) and its
model card (`hf_models.run_record.build_model_card`). `push_to_hub.py` is the command line over it.

The remote code is the run's own: `save_pretrained` copied `configuration_small_encoder.py` and
`modeling_small_encoder.py` into the run folder and wrote an `auto_map` for every head, so the code shipped is the
code that trained the weights. The run record ships in its public form (`RunRecord.public()`: no local path), which
the card is built from too, and which says how a birthplace model answers. Only allowlisted file names are staged
and uploaded; the files the export writes itself (config, card, record) are each written in one step.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import torch
from huggingface_hub import HfApi, ModelCard, get_token
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled, StrictDataclassError
from huggingface_hub.utils import filter_repo_objects
from safetensors import SafetensorError, safe_open

from .. import small_encoder
from ..run_record import DEFAULT_LICENSE, RECORD_FILE, build_model_card, read_record
from ..safety import one_line
from ..textio import UsageError, atomic_write, atomic_write_text

__all__ = [
    "ALLOW_PATTERNS",
    "CardOptions",
    "DENY_PATTERNS",
    "ExportResult",
    "PushError",
    "collect_files",
    "code_files",
    "copy_file",
    "explain",
    "export_folder",
    "share_run",
    "upload",
]

PROG = "push_to_hub.py"
CODE_PATTERNS = ("configuration_*.py", "modeling_*.py")
# Files copied verbatim from the run directory (top level only: `checkpoint-*/` is never walked for these).
WEIGHT_PATTERNS = ("model.safetensors", "model-*-of-*.safetensors", "model.safetensors.index.json")
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
    "chat_template.jinja",
)
CONFIG_FILES = ("config.json", "generation_config.json")
PLOT_PATTERN = "*.png"
# Written into every folder `export_folder` makes: `--overwrite` deletes a folder only when it holds this file.
EXPORT_MARKER = ".push_to_hub_export"
# Everything that may be uploaded: `upload_folder` receives this list, and `export_folder` refuses to stage a file
# that does not match it, so the dry run and the upload can only ever contain these names.
ALLOW_PATTERNS: list[str] = [
    "README.md",
    RECORD_FILE,  # written by the export in its public form (`RunRecord.public()`), never copied
    *CONFIG_FILES,
    *WEIGHT_PATTERNS,
    *CODE_PATTERNS,
    *TOKENIZER_FILES,
    PLOT_PATTERN,  # fnmatch's `*` also crosses `/`, so this covers `plots/loss.png`
]
# Refused even where an allow pattern matches (a folder named so is never walked): whatever else a run folder holds
# (optimizer state, logs, data, tokens) no allow pattern matches.
DENY_PATTERNS = (".env.*", "checkpoint-*", "runs", "*secret*", "__pycache__", "wandb")


class PushError(UsageError):
    """A problem the user can fix; the command line prints it as one line (`error: ...`) and exits with status 2."""


@dataclass
class CardOptions:
    """What the command line may add to or override in the card (`build_model_card`'s keywords)."""

    repo_id: str | None = None
    language: str | None = None
    license: str = DEFAULT_LICENSE
    birthplace: bool | None = None


@dataclass
class ExportResult:
    """The staged folder, its files (relative paths) and its card."""

    folder: Path
    files: list[Path]
    card: ModelCard


def _allowed(rel_path: Path) -> bool:
    """Whether `upload_folder` with our allow and ignore patterns uploads it, and no part of it (a folder's name) is
    hidden or denied: `checkpoint-1/.env` is refused twice."""
    kept = filter_repo_objects([rel_path.as_posix()], allow_patterns=ALLOW_PATTERNS, ignore_patterns=DENY_PATTERNS)
    denied = [part for part in rel_path.parts if part.startswith(".") or any(fnmatch(part, p) for p in DENY_PATTERNS)]
    return any(kept) and not denied


def collect_files(run_dir: str | os.PathLike, skip: str | os.PathLike | None = None) -> list[Path]:
    """The run files to copy as they are (weights, configs, code, tokenizer, plots), relative to `run_dir`: those at
    its top or one folder down (`plots/`) that the allow and ignore patterns keep.

    A symbolic link, or a path that resolves outside the run folder, is refused (PushError): a link to
    `/etc/passwd` named `notes.png` must never be uploaded."""
    run_dir = Path(run_dir)
    skip = Path(skip).resolve() if skip is not None else None
    found: list[Path] = []
    for root, dirs, names in os.walk(run_dir, followlinks=False):
        top = Path(root) == run_dir
        # One folder down at most, and never into the export folder itself.
        dirs[:] = [d for d in dirs if top and (Path(root) / d).resolve() != skip]
        found += [Path(root, name).relative_to(run_dir) for name in names]
    # Written by the export itself, never copied: the card and the public record.
    allowed = [rel for rel in found if _allowed(rel) and rel.name not in ("README.md", RECORD_FILE)]
    files = sorted(allowed, key=lambda p: p.as_posix())
    root = run_dir.resolve()
    for rel in files:
        linked = [run_dir / Path(*rel.parts[: i + 1]) for i in range(len(rel.parts))]
        if any(p.is_symlink() for p in linked) or not (run_dir / rel).resolve().is_relative_to(root):
            raise PushError(
                f"{run_dir / rel} is a symbolic link or resolves outside {run_dir}; links are never exported: "
                "replace it with the file itself or remove it"
            )
    return files


def code_files(run_dir: str | os.PathLike) -> list[Path]:
    """The run's remote code (the files `save_pretrained` copied), checked the way transformers will load it."""
    from transformers.dynamic_module_utils import get_imports

    files = sorted(p for pattern in CODE_PATTERNS for p in Path(run_dir).glob(pattern))
    if not any(p.name.startswith("modeling_") for p in files):
        raise PushError(
            f"no modeling_*.py in {run_dir}: the model was saved without its remote code; load it and "
            "save_pretrained it again with the current hf_models (which registers it for the Auto classes)"
        )
    for path in files:
        if "hf_models" in get_imports(str(path)):
            raise PushError(
                f"{path.name} imports `hf_models` with an absolute import, which cannot load from the Hub; "
                f"use a relative import (`from .module import X`) in {path}"
            )
    return files


def _check_run_dir(run_dir: Path) -> dict[str, Any]:
    if not run_dir.is_dir():
        raise PushError(f"run directory {run_dir} does not exist")
    try:
        config = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise PushError(
            f"{run_dir}/config.json is missing or unreadable; pass the folder a recipe saved the model in"
        ) from None
    if not any(run_dir.glob("model*.safetensors")):
        raise PushError(f"no model*.safetensors in {run_dir}; only safetensors weights are shared")
    if config.get("model_type") != "small-encoder":
        raise PushError(f"{run_dir}/config.json has model_type={config.get('model_type')!r}, expected 'small-encoder'")
    if not config.get("architectures"):
        raise PushError(f"{run_dir}/config.json has no `architectures`; save the model with save_pretrained")
    if config["architectures"][0] not in {head.__name__ for head in small_encoder.HEADS.values()}:
        raise PushError(f"unsupported architecture {config['architectures'][0]!r} in {run_dir}/config.json")
    if not config.get("auto_map"):
        raise PushError(f"{run_dir}/config.json has no `auto_map`; save the model again with the current hf_models")
    _check_shards(run_dir)
    check_weights(run_dir, config)
    return config


def _check_shards(run_dir: Path) -> None:
    """Weight shards that `model.safetensors.index.json` does not list (an earlier save's, or copied in by hand) would
    be exported and loaded beside the model's own weights: refused, named."""
    index = run_dir / "model.safetensors.index.json"
    try:
        listed = (
            set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()) if index.is_file() else set()
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise PushError(f"{index} is not a readable shard index; save the model again") from None
    stray = sorted(p.name for p in run_dir.glob("model-*-of-*.safetensors") if p.name not in listed)
    if stray:
        raise PushError(
            f"{run_dir}: stray weight shards {', '.join(stray)} (no model.safetensors.index.json lists them): they "
            "come from another save; remove them, or export the folder the model was saved in, unchanged"
        )


def _expected_shapes(run_dir: Path, config: dict[str, Any]) -> tuple[dict[str, tuple[int, ...]], set[str]]:
    """The tensor shapes `config.json` implies (a model built on the meta device: no memory), and the tied names
    that `save_pretrained` leaves out."""
    model_class = getattr(small_encoder, config["architectures"][0])  # one of HEADS: `_check_run_dir` made sure
    try:
        model_config = small_encoder.SmallEncoderConfig.from_dict(config)
        with torch.device("meta"):
            model = model_class(model_config)
    except (ValueError, TypeError, StrictDataclassError) as error:
        reason = one_line(error)
        raise PushError(f"{run_dir}/config.json is not a valid small-encoder config: {reason}") from None
    shapes = {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()}
    kept = {name for name, _ in model.named_parameters()} | {name for name, _ in model.named_buffers()}
    return shapes, set(shapes) - kept


def check_weights(run_dir: str | os.PathLike, config: dict[str, Any]) -> None:
    """Open every `model*.safetensors` (a truncated or foreign file fails here) and check each tensor's name and
    shape against what `config.json` implies (vocabulary, hidden size, layers), before anything is exported."""
    run_dir = Path(run_dir)
    expected, tied = _expected_shapes(run_dir, config)
    found: dict[str, tuple[int, ...]] = {}
    for path in sorted(run_dir.glob("model*.safetensors")):
        try:
            with safe_open(str(path), framework="pt") as weights:
                names = list(weights.keys())  # a safe_open handle is not iterable
                found.update({key: tuple(weights.get_slice(key).get_shape()) for key in names})
        except (SafetensorError, OSError) as error:
            raise PushError(
                f"{path}: not a readable safetensors file (truncated?): {error}; save the model again"
            ) from None
    unknown = sorted(set(found) - set(expected))
    wrong = [
        f"{key} {found[key]} (config.json implies {expected[key]})"
        for key in sorted(found)
        if key in expected and found[key] != expected[key]
    ]
    missing = sorted(set(expected) - set(found) - tied)
    if "model.safetensors.index.json" in {p.name for p in run_dir.iterdir()}:
        missing = []  # a sharded model may list its shards; the shards present were checked
    problems = [
        *(f"shape of {w}" for w in wrong),
        *(f"unexpected tensor {k}" for k in unknown[:3]),
        *(f"missing tensor {k}" for k in missing[:3]),
    ]
    if problems:
        raise PushError(
            f"{run_dir}: the weights do not match config.json ({'; '.join(problems[:4])}); export the folder the "
            "model was saved in, unchanged"
        )


def _prepare_local_dir(local_dir: Path, run_dir: Path, overwrite: bool) -> None:
    if local_dir.is_symlink():
        raise PushError(f"--local_dir {local_dir} is a symbolic link; give a real folder")
    if local_dir.exists() and not local_dir.is_dir():
        raise PushError(f"--local_dir {local_dir} is a file; give a folder")
    if local_dir.exists() and any(local_dir.iterdir()):
        if not overwrite:
            raise PushError(f"--local_dir {local_dir} is not empty; pick a new folder or add --overwrite")
        resolved, run = local_dir.resolve(), run_dir.resolve()
        # Never delete the run itself, one of its parents, the home folder or the file-system root.
        if resolved in (run, *run.parents, Path.home().resolve()) or resolved == Path(resolved.anchor):
            raise PushError(f"refusing to overwrite {local_dir}: it holds the run or is a system folder")
        # Only a folder this command exported (it holds the marker) is ever deleted.
        if not (resolved / EXPORT_MARKER).is_file():
            raise PushError(
                f"refusing to overwrite {local_dir}: push_to_hub.py did not export it (no {EXPORT_MARKER}); "
                "pick a new folder, or empty it yourself"
            )
        shutil.rmtree(resolved)
    local_dir.mkdir(parents=True, exist_ok=True)


def copy_file(source: Path, target: Path) -> None:
    """Copy `source` to `target` in one step (`atomic_write`): a failed copy leaves no half-written file."""
    with atomic_write(target) as staging:
        shutil.copyfile(source, staging)


def export_folder(
    run_dir: str | os.PathLike, local_dir: str | os.PathLike, options: CardOptions | None = None, overwrite=False
) -> ExportResult:
    """Write to `local_dir` exactly what would be uploaded: allowlisted run files, its code, config and card."""
    run_dir, local_dir = Path(run_dir), Path(local_dir)
    config = _check_run_dir(run_dir)
    code_files(run_dir)
    # Joined with Trainer's files (the whole account, for the card and the Hub copy); a corrupt record fails here,
    # before anything is written.
    record = read_record(run_dir)
    files = collect_files(run_dir, skip=local_dir)  # a link refused before the folder is made
    _prepare_local_dir(local_dir, run_dir, overwrite)
    # Trainer saves use_cache=False; a shared model should use its KV cache in plain forwards too.
    config["use_cache"] = True
    for rel in files:
        if rel.name != "config.json":
            copy_file(run_dir / rel, local_dir / rel)
    atomic_write_text(local_dir / "config.json", json.dumps(config, indent=2, sort_keys=True) + "\n")
    if not (run_dir / "tokenizer_config.json").is_file():
        print(
            f"{PROG}: warning: no tokenizer files in {run_dir}; pipeline() will not work from the export",
            file=sys.stderr,
        )
    # One record for the card and for the app and `evaluate` of a Hub copy (how a birthplace model answers).
    record = record.public() if record is not None else None
    plots = [rel for rel in files if fnmatch(rel.name, PLOT_PATTERN)]
    card = build_model_card(
        run_dir, config, record, plots, exported=True, **dataclasses.asdict(options or CardOptions())
    )
    if record is not None:
        record.save(local_dir)
    atomic_write_text(local_dir / "README.md", str(card))
    staged = sorted(
        (p.relative_to(local_dir) for p in local_dir.rglob("*") if p.is_file()), key=lambda p: p.as_posix()
    )
    atomic_write_text(local_dir / EXPORT_MARKER, "exported by push_to_hub.py; --overwrite may delete this folder\n")
    return ExportResult(folder=local_dir, files=staged, card=card)


def network_errors() -> tuple[type[BaseException], ...]:
    """Exception types meaning 'the Hub could not be reached or refused': OSError covers huggingface_hub's own
    (offline mode, HfHubHTTPError); the HTTP client's are added if the installed huggingface_hub uses it."""
    types: list[type[BaseException]] = [OSError]
    for module, name in (("httpx2", "HTTPError"), ("httpx", "HTTPError"), ("requests", "RequestException")):
        mod = sys.modules.get(module)
        if mod is not None and isinstance(getattr(mod, name, None), type):
            types.append(getattr(mod, name))
    return tuple(types)


def endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


OFFLINE_MESSAGE = (
    "cannot upload: offline mode is on (HF_HUB_OFFLINE=1); unset it and check your network, "
    "or use --dry_run --local_dir OUT"
)


def explain(error: BaseException) -> str:
    """One line saying what is missing and how to fix it, for an error raised while talking to the Hub."""
    if isinstance(error, OfflineModeIsEnabled):
        return OFFLINE_MESSAGE
    if isinstance(error, HfHubHTTPError):
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status in (401, 403):
            return (
                f"the Hub rejected the token (HTTP {status}); run 'hf auth login' with a token that has write access"
            )
        return f"the Hub refused the request (HTTP {status}): {one_line(error, 200)}"
    if isinstance(error, OSError) and not isinstance(error, ConnectionError | TimeoutError):
        # A local file problem (permissions, disk full), not the network.
        return f"{type(error).__name__}: {one_line(error, 200)}"
    return (
        f"cannot reach the Hugging Face Hub at {endpoint()} ({type(error).__name__}: {one_line(error, 120)}); "
        "check your network or proxy, or use --dry_run --local_dir OUT"
    )


def hub_client() -> HfApi:
    """A Hub client with the user's token; PushError, before any network call, in offline mode or without a token.
    (The environment is read at call time: huggingface_hub's own HF_HUB_OFFLINE constant is fixed at import.)"""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}:
        raise PushError(OFFLINE_MESSAGE)
    token = get_token()
    if not token:
        raise PushError(
            "no Hugging Face token found; run 'hf auth login' (or 'huggingface-cli login') or set HF_TOKEN"
        )
    return HfApi(token=token)


RECIPE_OFFLINE_MESSAGE = (
    "--push_to_hub: offline mode is on (HF_HUB_OFFLINE=1); unset it and check your network, or train without "
    "--push_to_hub and share the run folder later with push_to_hub.py"
)


def check_push_to_hub() -> None:
    """A recipe's `--push_to_hub`, refused before training when it cannot succeed: in offline mode, or without a
    token (PushError: one line, status 2)."""
    try:
        hub_client()
    except PushError as error:
        raise PushError(
            RECIPE_OFFLINE_MESSAGE if str(error) == OFFLINE_MESSAGE else f"--push_to_hub: {error}"
        ) from None


def share_run(
    run_dir: str | os.PathLike, repo_id: str | None = None, *, private: bool = False, revision: str | None = None
) -> str:
    """A recipe's `--push_to_hub`: upload the run folder as `push_to_hub.py` does (the allowlisted export, its
    card, the public run record) to `repo_id` (`--hub_model_id`; default: the folder's name under the token's
    user). Returns the commit URL. A failure is one line that says the run is saved and how to share it later."""
    run_dir = Path(run_dir)
    try:
        api = hub_client()
        repo_id = repo_id or run_dir.resolve().name
        if "/" not in repo_id:
            repo_id = f"{api.whoami()['name']}/{repo_id}"
        url, _ = upload(run_dir, CardOptions(repo_id=repo_id), private=private, revision=revision)
        return url
    except PushError as error:
        raise PushError(f"the run is saved in {run_dir}, but not shared: {error}") from None
    except network_errors() as error:
        raise PushError(
            f"the run is saved in {run_dir}, but not shared: {explain(error)}; share it later with "
            f"python push_to_hub.py {run_dir} --repo_id {repo_id or 'USER/NAME'}"
        ) from None


def upload(
    run_dir: str | os.PathLike,
    options: CardOptions,
    *,
    private: bool = False,
    revision: str | None = None,
    commit_message: str | None = None,
) -> tuple[str, int]:
    """Stage the export in a temporary folder and upload it; returns (commit URL, number of files).

    Raises PushError for what the user must fix, and the Hub client's errors for the network."""
    run_dir = Path(run_dir)
    api = hub_client()
    api.whoami()  # fails fast, before staging, on a bad token or no network
    with tempfile.TemporaryDirectory(prefix="push_to_hub-") as tmp:
        staged = export_folder(run_dir, Path(tmp) / "export", options)
        api.create_repo(repo_id=options.repo_id, repo_type="model", private=private or None, exist_ok=True)
        if revision:
            api.create_branch(repo_id=options.repo_id, branch=revision, repo_type="model", exist_ok=True)
        info = api.upload_folder(
            repo_id=options.repo_id,
            repo_type="model",
            folder_path=str(staged.folder),
            revision=revision,
            commit_message=commit_message or f"Upload {run_dir.resolve().name} with push_to_hub.py",
            allow_patterns=ALLOW_PATTERNS,
            ignore_patterns=list(DENY_PATTERNS),
        )
    return str(getattr(info, "commit_url", None) or f"{endpoint()}/{options.repo_id}"), len(staged.files)
