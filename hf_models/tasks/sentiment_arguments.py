"""The command-line arguments of `recipes/finetune_sentiment.py`, beside `hf_models.tasks.sentiment`."""

from __future__ import annotations

from dataclasses import dataclass, field

from hf_models.small_encoder.configuration_small_encoder import CLASSIFIER_POOLINGS
from hf_models.training import TRAINER_GROUP, FlagGroup, model_group

DEFAULT_PRESET = "altegrad-lab"  # the model from scratch, unless --model_config names another


@dataclass
class SentimentArguments:
    data_dir: str = field(
        default=None, metadata={"help": "Folder with {train,valid,test}.review.spm and {train,valid}.label."}
    )
    from_scratch: bool = field(
        default=False, metadata={"help": "Train a new model from --model_config instead of --model_name_or_path."}
    )
    freeze_backbone: bool = field(default=False, metadata={"help": "Train the classification head only."})
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
            "tokens, 'first', or 'all_layers' (mean and max of every layer). "
            "Default: keep the model's.",
            "choices": list(CLASSIFIER_POOLINGS),
        },
    )
    classifier_dropout: float | None = field(
        default=None, metadata={"help": "Dropout on the pooled vector before the head. Default: keep the model's."}
    )
    gradual_unfreezing: int = field(
        default=0,
        metadata={
            "help": "ULMFiT's gradual unfreezing: epoch 1 trains the head alone, then each epoch thaws this many more "
            "layer groups of the backbone, from the top (last block first, embeddings last). 0: all train at once."
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
    length_buckets: bool = field(
        default=False,
        metadata={
            "help": "Train on batches of reviews of similar length, the batches in random order (half the positions "
            "of a random batch of 16 are padding). Unlike --train_sampling_strategy group_by_length, whose batches "
            "run longest first, every epoch ends on reviews of any length."
        },
    )
    label_budget: int | None = field(
        default=None,
        metadata={
            "help": "Train on this many training reviews, half of each label: a draw seeded by --data_seed (else "
            "--seed), nested (for one seed a budget holds every smaller one's reviews), in the file's order. "
            "benchmarks/tfidf_baseline.py --label_budget draws the same reviews. Default: all of them."
        },
    )
    max_eval_samples: int | None = field(default=None, metadata={"help": "Truncate the validation set (debugging)."})
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


# The command line: the task's flags, the model's, then Trainer's (each group under its title in --help).
ARGUMENT_GROUPS = (FlagGroup("Sentiment arguments", SentimentArguments), model_group(DEFAULT_PRESET), TRAINER_GROUP)
