"""The recipes' logic, as library code: each module holds a task's argument dataclass, its steps as functions
of the parsed arguments, and a `main(args)` that parses a command line (the scripts in `recipes/` call it).

- `pretraining`: causal, span-corruption or masked LM pretraining on text files (`recipes/pretrain.py`).
- `sentiment`: book-review sentiment, the ALTeGraD lab (`recipes/finetune_sentiment.py`).
- `birthplace`: CS224N assignment 5, pretrain | finetune | evaluate, and `predict_answers` (`recipes/birthplace.py`).

The set-up they share (logging, seed, tokenizer and model, block size, the end of a run) is in
`hf_models.training_utils`.
"""
