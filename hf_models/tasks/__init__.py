"""The recipes' logic, as library code: each module holds a task's argument dataclass, its steps as functions
of the parsed arguments, and a `main(args)` that parses a command line (the scripts in `recipes/` call it).

- `pretraining`: causal, span-corruption or masked LM pretraining on text files (`recipes/pretrain.py`).
- `sentiment`: book-review sentiment, the ALTeGraD lab (`recipes/finetune_sentiment.py`), with its reviews
  (`sentiment_reviews`), LP-FT's linear probe (`sentiment_probe`) and its scores and test predictions
  (`sentiment_predictions`).
- `birthplace`: CS224N assignment 5, pretrain | finetune | evaluate (`recipes/birthplace.py`), with its two QA
  formats (our BPE, the course's characters) in `qa_formats`.

The stages they share (arguments, model set-up, Trainer, plots, the end of a run) are in `hf_models.training`; the
tokenizer comes from `hf_models.tokenization.resolve_tokenizer`.
"""
