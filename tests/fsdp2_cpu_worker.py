"""One rank of the 2-process CPU FSDP2 test (`tests/test_distributed.py`), run by `torchrun --nproc_per_node 2`.

It shards a tiny `base` model the way `recipes/accelerate/fsdp.yaml` asks accelerate to (`fully_shard` on each
`SmallEncoderBlock`, the model's `_no_split_modules`, then on the root), trains it on each rank's half of a global
batch, gathers the full state dict and saves it with `save_pretrained` on rank 0, as accelerate's FULL_STATE_DICT
does. Rank 0 also writes what the test compares: the logits of the trained sharded model, and those of the same
model trained unsharded on the whole global batch.

(accelerate 1.15 cannot launch this itself: on the CPU its state stays MULTI_CPU and the FSDP plugin is unused,
so `accelerate launch` with an FSDP config trains with DDP. See the README.)
"""

import json
import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor

from hf_models import SmallEncoderConfig, SmallEncoderForCausalLM

TINY_BASE = dict(
    vocab_size=128,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=64,
    max_position_embeddings=32,
    embedding_dropout=0.0,
    attention_dropout=0.0,
    hidden_dropout=0.0,
)
STEPS, PER_RANK_BATCH = 4, 4


def new_model() -> SmallEncoderForCausalLM:
    torch.manual_seed(0)  # the same initial weights on every rank and for the reference
    return SmallEncoderForCausalLM(SmallEncoderConfig.from_preset("base", **TINY_BASE))


def train(model, batches) -> list[float]:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for batch in batches:
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    return losses


def main(output_dir: Path) -> None:
    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    generator = torch.Generator().manual_seed(1)
    global_batches = [
        torch.randint(0, TINY_BASE["vocab_size"], (PER_RANK_BATCH * world_size, 32), generator=generator)
        for _ in range(STEPS)
    ]
    model = new_model()
    for block in model.model.layers:
        fully_shard(block)
    fully_shard(model)
    shard = model.model.layers[0].mlp.fc1.weight
    local_batches = [batch[rank * PER_RANK_BATCH : (rank + 1) * PER_RANK_BATCH] for batch in global_batches]
    losses = train(model, local_batches)

    probe = global_batches[0][:2]
    model.eval()
    with torch.no_grad():
        logits = model(input_ids=probe).logits  # every rank takes part in the all-gathers
    state_dict = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    if rank == 0:
        model.save_pretrained(output_dir, state_dict=state_dict)
        reference = new_model()
        reference_losses = train(reference, global_batches)
        with torch.no_grad():
            reference_logits = reference.eval()(input_ids=probe).logits
        torch.save({"probe": probe, "logits": logits, "reference_logits": reference_logits}, output_dir / "probe.pt")
        facts = {
            "world_size": world_size,
            "sharded": isinstance(shard, DTensor),
            "local_rows": shard.to_local().shape[0],
            "full_rows": shard.shape[0],
            "losses_rank0": losses,
            "reference_losses": reference_losses,
        }
        (output_dir / "fsdp_facts.json").write_text(json.dumps(facts))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
    # Every result is written and the process group is destroyed: leave without the interpreter's teardown, in
    # which gloo's threads sometimes abort a rank ("terminate called without an active exception") on a busy machine.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
