"""hf_models: small Transformers to pretrain and transfer, native to the Hugging Face ecosystem.

Importing `hf_models.small_encoder` (or any model name from here: `from hf_models import SmallEncoderForCausalLM`)
registers the `small-encoder` model family with the Auto classes. `import hf_models` alone imports nothing heavy, so
that a recipe's `-h` answers without torch.

The layout follows the pipeline: `small_encoder/` (the model, standalone remote code), `tokenization/`, `data/`,
`training/` (set-up, Trainer, plots, the end of a run), `tasks/` (the recipes' logic), then `hub/` (sharing a run)
and `convert/` (course checkpoints). `run_record.py` is the record every stage writes or reads; `environment.py` the
offline environment every command runs in.
"""

import importlib
import sys
from collections.abc import Callable

__version__ = "0.1.0"


def lazy_namespace(package: str, modules: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for a package `package` whose names live in the submodules `modules` maps them
    to: a name is imported on first use (a command line's `-h` needs neither torch nor datasets), then kept."""

    def __getattr__(name: str) -> object:
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{modules[name]}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted([*vars(sys.modules[package]), *modules])

    return __getattr__, __dir__


# The model family's names (`small_encoder.__all__`, which tests/test_modeling.py holds this list to), imported and
# registered when first used.
_MODEL_NAMES = (
    "AUTO_MAP HEADS SmallEncoderConfig SmallEncoderPreTrainedModel SmallEncoderModel SmallEncoderForCausalLM "
    "SmallEncoderForSequenceClassification SmallEncoderForMaskedLM"
)
__all__ = _MODEL_NAMES.split()
__getattr__, __dir__ = lazy_namespace(__name__, dict.fromkeys(__all__, "small_encoder"))
