#!/usr/bin/env python
"""How many dev people's birth facts a pretrained model completes from the opening words of their paragraph.

    python benchmarks/probe_facts.py --data_dir ../shared/data/birthplace --model_name_or_path RUN_DIR

For each dev question whose answer appears in the person's `wiki.txt` paragraph, the model is given the
paragraph up to the answer's first occurrence and greedy-decodes a few tokens; the fact is completed when the
continuation starts with the answer. This measures what pretraining stored, before any QA finetuning.

A second count starts from the name alone: the model recites `--recite_tokens` tokens from `Name.` (as
`--recite_tokens` makes it do before answering), and the fact is recalled when the answer is in the recitation.
Stored but not recalled: the opening words reach the fact, the name alone does not.
Prints the counts and writes them to RUN_DIR/fact_probe.json.
"""

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

from hf_models import SmallEncoderForCausalLM
from hf_models.data import load_birthplace, load_birthplace_corpus, person_name
from hf_models.safety import check_flag_ranges, check_output_file, command_line
from hf_models.safety.ranges import POSITIVE
from hf_models.tasks.birthplace_qa import RecitingQAFormat
from hf_models.textio import UsageError, atomic_write_text
from hf_models.tokenization import load_tokenizer
from hf_models.training import HelpFormatter, load_pretrained

COURSE_PREFIX_CHARS = 112  # the longest truncation CS224N's span corruption ever shows of a paragraph


def fact_prompts(data_dir: str) -> list[tuple[str, str, int, str]]:
    """(paragraph text before the answer, answer, answer offset, question) for each dev person whose answer is in
    their paragraph."""
    paragraphs = list(load_birthplace_corpus(data_dir)["train"]["text"])
    dev = load_birthplace(data_dir)["validation"]
    prompts = []
    for question, answer in zip(dev["question"], dev["answer"], strict=True):
        name = person_name(question)
        paragraph = None if name is None else next((p for p in paragraphs if p.startswith(name)), None)
        offset = -1 if paragraph is None else paragraph.find(answer)
        if offset > 0:
            prompts.append((paragraph[:offset].rstrip(" "), answer, offset, question))
    return prompts


@torch.no_grad()
def complete(model, tokenizer, texts: list[str], max_new_tokens: int = 8, batch_size: int = 64) -> list[str]:
    room = model.config.max_position_embeddings - max_new_tokens
    tokenizer.padding_side = "left"
    outputs = []
    for start in range(0, len(texts), batch_size):
        ids = [x[-room:] for x in tokenizer(texts[start : start + batch_size], add_special_tokens=False)["input_ids"]]
        batch = tokenizer.pad({"input_ids": ids}, return_tensors="pt")
        generated = model.generate(
            **batch, do_sample=False, max_new_tokens=max_new_tokens, pad_token_id=tokenizer.pad_token_id
        )
        outputs += tokenizer.batch_decode(generated[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)
    return outputs


# The allowed values of the numeric flags below (`check_flag_ranges`).
FLAG_RANGES = {"recite_tokens": POSITIVE}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--data_dir", required=True, help="the birthplace folder (wiki.txt, birth_dev.tsv)")
    parser.add_argument("--model_name_or_path", required=True, help="a pretrained model folder")
    parser.add_argument(
        "--recite_tokens", type=int, default=40, help="length of a recitation from the name, in tokens"
    )
    args = parser.parse_args(argv)
    check_flag_ranges(args, ranges=FLAG_RANGES)
    output = Path(args.model_name_or_path, "fact_probe.json")  # beside the model it probes, as its report
    check_output_file(output, [("--data_dir", args.data_dir)], "the report")
    model = load_pretrained(SmallEncoderForCausalLM, args.model_name_or_path, causal=True, dtype=torch.float32).eval()
    block = model.config.max_position_embeddings
    if args.recite_tokens > block:  # a recitation stops at the model's block: the report would claim a longer one
        raise UsageError(
            f"--recite_tokens {args.recite_tokens}: the model reads at most {block} tokens; give {block} or fewer"
        )
    tokenizer = load_tokenizer(args.model_name_or_path)
    prompts = fact_prompts(args.data_dir)
    continuations = complete(model, tokenizer, [p for p, _, _, _ in prompts])
    hits = [c.strip().startswith(answer) for c, (_, answer, _, _) in zip(continuations, prompts, strict=True)]
    early = [hit for hit, (_, _, offset, _) in zip(hits, prompts, strict=True) if offset <= COURSE_PREFIX_CHARS]
    recitations = RecitingQAFormat(args.recite_tokens).recite(model, tokenizer, [q for _, _, _, q in prompts], 64)
    recalled = [
        answer in tokenizer.decode(ids, skip_special_tokens=True)
        for ids, (_, answer, _, _) in zip(recitations, prompts, strict=True)
    ]
    result = {
        "facts_in_paragraph": len(prompts),
        "completed": sum(hits),
        f"facts_in_first_{COURSE_PREFIX_CHARS}_chars": len(early),
        f"completed_in_first_{COURSE_PREFIX_CHARS}_chars": sum(early),
        "recite_tokens": args.recite_tokens,
        "recalled_from_name": sum(recalled),
    }
    print(
        f"Completed {sum(hits)} of {len(prompts)} dev birth facts from their paragraph's opening words "
        f"({sum(early)} of {len(early)} within the first {COURSE_PREFIX_CHARS} characters); recalled "
        f"{sum(recalled)} from the name alone ({args.recite_tokens}-token recitations)"
    )
    atomic_write_text(output, json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(command_line(main, sys.argv[1:]))
