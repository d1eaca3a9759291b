"""The recipes' logic, as library code: each module holds a task's argument dataclass, its steps as functions
of the parsed arguments, and a `main(args)` that parses a command line (the scripts in `recipes/` call it).

- `pretraining`: causal, span-corruption or masked LM pretraining on text files (`recipes/pretrain.py`).
- `sentiment`: book-review sentiment, the ALTeGraD lab (`recipes/finetune_sentiment.py`), with its reviews
  (`sentiment_reviews`), the linear probe (`sentiment_probe`) and its scores and test predictions
  (`sentiment_predictions`).
- `birthplace`: CS224N assignment 5, pretrain | finetune | evaluate (`recipes/birthplace.py`; evaluate in
  `birthplace_evaluation`), with its QA formats (our BPE, reciting first or not, the course's characters) in
  `qa_formats`, decoded by `qa_decoding`.

The stages they share (arguments, model set-up, Trainer, plots, the end of a run) are in `hf_models.training`; the
tokenizer comes from `hf_models.tokenization.resolve_tokenizer`.
"""
