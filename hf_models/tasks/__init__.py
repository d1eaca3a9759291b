"""The recipes' logic, as library code: one module per task, holding its flags (a dataclass and its argument groups)
and its steps as functions of the parsed arguments; each script in `recipes/` parses, sets up the run and calls them.
A task module imports the training stack (datasets, Trainer) in the functions that run, so that `-h` needs neither.

- `pretraining`: causal, span-corruption or masked LM pretraining on text files (`recipes/pretrain.py`).
- `sentiment`: book-review sentiment, the ALTeGraD lab (`recipes/finetune_sentiment.py`): its reviews, the
  classifier, LP-FT's linear probe, its scores and test predictions.
- `birthplace`: CS224N assignment 5, pretrain | finetune | evaluate (`recipes/birthplace.py`), with its QA formats
  (our BPE, reciting first or not, the course's characters) and their greedy decoding in `birthplace_qa`, which the
  app and `evaluate` use without the training stack.

The stages they share (arguments, model set-up, Trainer, plots, the end of a run) are in `hf_models.training`; the
tokenizer comes from `hf_models.tokenization.resolve_tokenizer`.
"""
