#!/usr/bin/env bash
# Sentiment (CLS-FR books) on the real data, ALTeGraD-lab style: BPE tokenizer and a causal LM pretrained
# on a documented subsample of the French corpus + the unlabeled training reviews, then finetuned three
# ways (scratch / pretrained / frozen backbone), validation accuracy per epoch, the lab figure, test
# predictions. Run from the repo root:  DATA_ROOT=../shared/data bash benchmarks/sentiment.sh
# CPU-sized by default (see BENCHMARKS.md); a GPU run would raise SENT_PRE_STEPS and the corpus size.
cd "$(dirname "$0")/.."
source benchmarks/common.sh
SE=$OUT/sentiment
CLS=$DATA_ROOT/cls-books
SENT_NEWS_LINES=${SENT_NEWS_LINES:-3000}      # first articles of orangesum_news.txt.gz
SENT_NOVEL_LINES=${SENT_NOVEL_LINES:-15000}   # first paragraphs of eltec_novels.txt.gz
SENT_VOCAB=${SENT_VOCAB:-8000}
SENT_PRE_STEPS=${SENT_PRE_STEPS:-250}
SENT_EPOCHS=${SENT_EPOCHS:-4}
mkdir -p "$SE"

$PY benchmarks/prepare_data.py sentiment-corpus --data_root "$DATA_ROOT" --out "$OUT/data" \
    --news_lines "$SENT_NEWS_LINES" --novel_lines "$SENT_NOVEL_LINES"
CORPUS=$OUT/data/sentiment-corpus/pretrain.txt

# Reference line: TF-IDF + logistic regression (skipped when scikit-learn is not installed).
step se_tfidf $PY benchmarks/tfidf_baseline.py --data_dir "$CLS" --output_dir "$SE/tfidf" || true

step se_tokenizer $PY tokenizer/train_tokenizer.py --files "$CORPUS" --vocab_size "$SENT_VOCAB" \
    --output_dir "$SE/tokenizer" --no_progress

step se_pretrain $PY recipes/pretrain.py --objective clm --train_files "$CORPUS" --validation_split_percentage 1 \
    --tokenizer_name_or_path "$SE/tokenizer" --model_config altegrad-lab --block_size 128 \
    --output_dir "$SE/pretrain" --max_steps "$SENT_PRE_STEPS" --per_device_train_batch_size 32 \
    --per_device_eval_batch_size 64 --max_eval_samples 200 --learning_rate 1e-3 --lr_scheduler_type cosine \
    --warmup_steps 25 --weight_decay 0.01 --logging_steps 25 "${COMMON_ARGS[@]}"

FT_ARGS=(--data_dir "$CLS" --num_train_epochs "$SENT_EPOCHS" --per_device_train_batch_size 16 --max_seq_length 256
         --per_device_eval_batch_size 64 --lr_scheduler_type linear --warmup_steps 20 --weight_decay 0.01
         --logging_steps 25 "${COMMON_ARGS[@]}")
step se_scratch $PY recipes/finetune_sentiment.py --from_scratch --tokenizer_name_or_path "$SE/tokenizer" \
    --model_config altegrad-lab --learning_rate 5e-4 --output_dir "$SE/scratch" "${FT_ARGS[@]}"
step se_pretrained $PY recipes/finetune_sentiment.py --model_name_or_path "$SE/pretrain" \
    --learning_rate 3e-4 --output_dir "$SE/pretrained" "${FT_ARGS[@]}"
step se_frozen $PY recipes/finetune_sentiment.py --model_name_or_path "$SE/pretrain" --freeze_backbone \
    --learning_rate 3e-3 --output_dir "$SE/frozen" "${FT_ARGS[@]}"

$PY recipes/plot_sentiment.py --runs scratch="$SE/scratch" pretrained="$SE/pretrained" frozen="$SE/frozen" \
    --output benchmarks/figures/sentiment_valid_accuracy.png --title "CLS-FR books: validation accuracy per epoch (CPU-sized)"
