"""Convert a checkpoint trained with the course code into a `small-encoder` `save_pretrained` folder.

    python -m hf_models.convert altegrad-lab CHECKPOINT.pt --output_dir DIR [--tokenizer TOKENIZER_DIR]
    python -m hf_models.convert cs224n-mingpt CHECKPOINT.pt --output_dir DIR [--attention_type vanilla|synthesizer]

In the spirit of transformers' `convert_*_original_pytorch_checkpoint_to_pytorch.py` scripts: the input is the state
dict the course code saves (`torch.save(model.state_dict(), path)`, or a dict holding it under `model_state_dict` or
`state_dict`); every key is checked (name and shape) before anything is written, and unknown, missing or mis-shaped
keys are reported together in one error.

- `altegrad-lab`: the lab's `Model` (`base.encoder`, `base.pos_encoder.pe`, `base.transformer_encoder.layers.N.*`,
  `classifier.decoder`). A decoder with one output per token gives `SmallEncoderForCausalLM`, any other width
  `SmallEncoderForSequenceClassification` (the lab's classifier reads the last position). Dropouts are 0, as in the lab.
- `cs224n-mingpt`: CS224N a5's minGPT (`tok_emb`, `pos_emb`, `blocks.N.{ln1,ln2,attn.*,mlp.0,mlp.2}`, `ln_f`, `head`),
  with vanilla attention or the course's synthesizer (`attn.w1`, `attn.w2`, `attn.b2`), as `SmallEncoderForCausalLM`
  with exact GELU. The course synthesizer spans ℓ = block − 1 key positions (its inputs are block − 1 characters long)
  while `pos_emb` has `block` rows, so the converted config has `max_position_embeddings=block` and
  `synthesizer_width=block-1`. Its single B and b2 are tiled across the heads (one B_i per head, the project's
  layout); `--share_synthesizer_heads` keeps them shared (`synthesizer_shared_heads=True`): the same logits, and
  exactly the course's parameter count.

Attention head counts are not stored in a state dict: `--num_heads` defaults to the course's (2 for the lab, 8 for
minGPT), and a synthesizer's is checked against the width of its B.
"""

# One module per concern: `checkpoint.py` (what the converters share: reading a course state dict, checking its keys,
# the converted config), `altegrad_lab.py` and `cs224n_mingpt.py` (one converter per course checkpoint), `export.py`
# (convert and save, with the tokenizer and the run record) and `cli.py` (the command line; `__main__.py` runs it).
from .altegrad_lab import convert_altegrad_lab
from .checkpoint import CheckpointError, ModelSizes, check_keys, course_config, load_course_state_dict
from .cli import check_output, main, parse_args
from .cs224n_mingpt import convert_cs224n_mingpt
from .export import COURSES, attach_tokenizer, conversion_record, convert_checkpoint

__all__ = [
    "COURSES",
    "CheckpointError",
    "ModelSizes",
    "attach_tokenizer",
    "check_keys",
    "check_output",
    "conversion_record",
    "convert_altegrad_lab",
    "convert_checkpoint",
    "convert_cs224n_mingpt",
    "course_config",
    "load_course_state_dict",
    "main",
    "parse_args",
]
