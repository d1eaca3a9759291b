"""The recipes' logic, as library code: one module per task, holding its steps as functions of the parsed arguments
and a `main(args)` that parses a command line (the scripts in `recipes/` call it); each task's flags are beside it
in `<task>_arguments`.

- `pretraining`: causal, span-corruption or masked LM pretraining on text files (`recipes/pretrain.py`).
- `sentiment`: book-review sentiment, the ALTeGraD lab (`recipes/finetune_sentiment.py`): its reviews, the
  classifier, LP-FT's linear probe, its scores and test predictions.
- `birthplace`: CS224N assignment 5, pretrain | finetune | evaluate (`recipes/birthplace.py`), with its QA formats
  (our BPE, reciting first or not, the course's characters) and their greedy decoding in `birthplace_qa`, which the
  app and `evaluate` use without the training stack.

The stages they share (arguments, model set-up, Trainer, plots, the end of a run) are in `hf_models.training`; the
tokenizer comes from `hf_models.tokenization.resolve_tokenizer`.
"""
