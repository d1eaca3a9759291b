"""The command-line arguments of `recipes/finetune_sentiment.py`, beside `hf_models.tasks.sentiment`."""

from __future__ import annotations

from dataclasses import dataclass, field

from hf_models.small_encoder.configuration_small_encoder import CLASSIFIER_POOLINGS


@dataclass
class SentimentArguments:
    data_dir: str = field(
        default=None, metadata={"help": "Folder with {train,valid,test}.review.spm and {train,valid}.label."}
    )
    from_scratch: bool = field(
        default=False, metadata={"help": "Train a new model from --model_config instead of --model_name_or_path."}
    )
    freeze_backbone: bool = field(default=False, metadata={"help": "Train the classification head only."})
    freeze_embeddings: bool = field(
        default=False,
        metadata={
            "help": "Keep the token embeddings as they start (pretrained, or random from scratch) and train the rest: "
            "the words that no training review holds then stay where the words that do are."
        },
    )
    causal_mask: bool | None = field(
        default=None,
        metadata={
            "help": "true: causal attention (the lab's LM backbone); false: bidirectional. Default: keep the model's."
        },
    )
    classifier_pooling: str | None = field(
        default=None,
        metadata={
            "help": "How the classifier reads the sequence: 'last' non-pad token (the lab's), 'mean' of the "
            "tokens, 'first', 'concat' (last, mean and max), or 'all_layers' (mean and max of every layer). "
            "Default: keep the model's.",
            "choices": list(CLASSIFIER_POOLINGS),
        },
    )
    classifier_dropout: float | None = field(
        default=None, metadata={"help": "Dropout on the pooled vector before the head. Default: keep the model's."}
    )
    dropout: float | None = field(
        default=None,
        metadata={
            "help": "Set the backbone's four dropouts (after the embeddings, on the attention weights, on each "
            "sublayer's output, in the feed-forward) to this: a language model pretrained without dropout, which "
            "is faster on the CPU, can then be finetuned with it. Default: keep the model's (from scratch: the preset's)."
        },
    )
    gradual_unfreezing: int = field(
        default=0,
        metadata={
            "help": "ULMFiT's gradual unfreezing: epoch 1 trains the head alone, then each epoch thaws this many more "
            "layer groups of the backbone, from the top (last block first, embeddings last). 0: all train at once."
        },
    )
    decay_toward_start: float = field(
        default=0.0,
        metadata={
            "help": "L2-SP: after each step the backbone's weights move back toward their start by learning "
            "rate x this of the distance (weight decay toward the pretrained weights, not zero). 0: off."
        },
    )
    average_last_epochs: int = field(
        default=0, metadata={"help": "Keep the average of the weights of the last N epochs (0: the last weights)."}
    )
    wise_ft_alpha: float = field(
        default=1.0,
        metadata={
            "help": "WiSE-FT: when training ends, keep (1 - alpha) x the starting weights + alpha x the finetuned "
            "ones (with --head_init linear_probe the start is the backbone under its probe head). 1: the finetuned "
            "weights. The per-epoch curve is of the finetuned weights; the final scores and the test predictions "
            "are of the mix."
        },
    )
    auxiliary_lm_weight: float = field(
        default=0.0,
        metadata={
            "help": "SiATL: while finetuning, add this x the causal LM loss of the training reviews to the "
            "classification loss, so that the backbone keeps predicting the next token (its LM head starts as the "
            "pretrained model's; from scratch, at random). The weight is multiplied by --auxiliary_lm_decay every "
            "epoch. 0: off."
        },
    )
    auxiliary_lm_decay: float = field(
        default=0.5,
        metadata={"help": "The auxiliary LM loss's weight is weight x this ** epoch (epochs counted in fractions)."},
    )
    auxiliary_lm_positions: float = field(
        default=0.25,
        metadata={
            "help": "The share of a batch's positions, drawn anew each step, whose next token the auxiliary LM loss "
            "predicts (every position would make its vocabulary-wide softmax the step's main cost)."
        },
    )
    selection_split_percentage: int = field(
        default=0,
        metadata={
            "help": "Hold out this share of the training reviews, score it every epoch, and keep the epoch that "
            "scores best there (never chosen on validation or test). 0: keep the last epoch."
        },
    )
    backbone_learning_rate: float | None = field(
        default=None,
        metadata={
            "help": "Discriminative learning rate (ULMFiT): the backbone trains at this rate and the new "
            "classification head at --learning_rate. Default: one rate for all."
        },
    )
    head_init: str = field(
        default="random",
        metadata={
            "help": "How the new classification head starts. 'random'; or 'linear_probe' (LP-FT): a logistic "
            "regression fitted to convergence on the frozen model's features of the training reviews, its L2 "
            "strength chosen by --linear_probe_folds-fold cross-validation on them (never on validation). With "
            "--freeze_backbone and --num_train_epochs 0 the probe is the classifier.",
            "choices": ["random", "linear_probe"],
        },
    )
    save_linear_probe: bool = field(
        default=False,
        metadata={
            "help": "With --head_init linear_probe: also keep the probe alone, before any finetuning, as a run of its "
            "own in OUTPUT_DIR/linear_probe (its record with the validation scores, and its test predictions): the "
            "frozen backbone's linear-probe classifier, without a second run over the same features."
        },
    )
    linear_probe_folds: int = field(
        default=5, metadata={"help": "Cross-validation folds of the training reviews that choose the probe's L2."}
    )
    max_seq_length: int = field(default=256, metadata={"help": "Reviews are truncated to this many tokens."})
    keep_review_end: int = field(
        default=0,
        metadata={
            "help": "Of a review longer than --max_seq_length, keep its last N tokens and its first "
            "max_seq_length - N (the middle is cut: a long review often ends on its verdict). 0: its first "
            "max_seq_length tokens."
        },
    )
    length_buckets: bool = field(
        default=False,
        metadata={
            "help": "Train on batches of reviews of similar length, the batches in random order (half the positions "
            "of a random batch of 16 are padding). Unlike --train_sampling_strategy group_by_length, whose batches "
            "run longest first, every epoch ends on reviews of any length."
        },
    )
    max_train_samples: int | None = field(default=None, metadata={"help": "Truncate the training set (debugging)."})
    max_eval_samples: int | None = field(default=None, metadata={"help": "Truncate the validation set (debugging)."})
    max_predict_samples: int | None = field(
        default=None, metadata={"help": "Predict only the first N test reviews (debugging, a smoke test)."}
    )
    lab_vocabulary: bool = field(
        default=False,
        metadata={
            "help": "The lab's exact setting: reviews stay SentencePiece pieces and map to the lab's 50,001 ids "
            "(<s> <pad> </s> <unk>, then DATA_DIR/dict.txt), the vocabulary of the altegrad-lab preset. The "
            "tokenizer is built from DATA_DIR unless --tokenizer_name_or_path or the model folder has one."
        },
    )
    lab_raw_text: bool = field(
        default=False,
        metadata={
            "help": "The lab's 50,001 ids over raw text: reviews are detokenized and encoded with the lab's "
            "SentencePiece model mapped to dict.txt's ids (the altegrad-lab-raw tokenizer, built from DATA_DIR "
            "unless --tokenizer_name_or_path or the model folder has one). A model pretrained on raw text with "
            "recipes/pretrain.py --lab_vocabulary has it saved beside it."
        },
    )
    test_predictions_file: str = field(
        default="test_predictions.txt", metadata={"help": "File name (in --output_dir) of the test predictions."}
    )
