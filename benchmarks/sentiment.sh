#!/usr/bin/env bash
# Sentiment (CLS-FR books) on the real data, ALTeGraD-lab style: a BPE tokenizer and a causal LM pretrained on
# French news and novels (+ the unlabeled training reviews), a second LM stage on the training reviews alone
# (ULMFiT's target-domain stage; never a validation or test review), then finetuned three ways (scratch /
# pretrained / frozen backbone), each with 3 seeds: validation accuracy per epoch, the lab's figure, test
# predictions. Run from the repo root:  DATA_ROOT=../shared/data bash benchmarks/sentiment.sh   (PROFILE=cpu | gpu)
cd "$(dirname "$0")/.."
source benchmarks/common.sh
SE=$OUT/sentiment
CLS=$DATA_ROOT/cls-books
case $PROFILE in
    cpu)  # about 50 min on both cores of the 2-core CPU; the LM sees 11.5M tokens (about 0.9 of a pass)
        SENT_NEWS_LINES=${SENT_NEWS_LINES:-10000}; SENT_NOVEL_LINES=${SENT_NOVEL_LINES:-110000}
        SENT_PRE_STEPS=${SENT_PRE_STEPS:-2800}; SENT_BATCH=${SENT_BATCH:-32} ;;
    gpu)  # the whole French corpus (35M tokens), 20,000 steps: about 9 passes, 11 min on an H100
        SENT_NEWS_LINES=${SENT_NEWS_LINES:-1000000}; SENT_NOVEL_LINES=${SENT_NOVEL_LINES:-1000000}
        SENT_PRE_STEPS=${SENT_PRE_STEPS:-20000}; SENT_BATCH=${SENT_BATCH:-128} ;;
    *) echo "PROFILE must be cpu or gpu, not $PROFILE"; exit 2 ;;
esac
SENT_VOCAB=${SENT_VOCAB:-8000}
SENT_DOMAIN_EPOCHS=${SENT_DOMAIN_EPOCHS:-2}
SENT_EPOCHS=${SENT_EPOCHS:-4}
SENT_SEEDS=${SENT_SEEDS:-"42 43 44"}
SENT_POOLING=${SENT_POOLING:-mean}
SENT_MODEL=${SENT_MODEL:-}   # config overrides of the altegrad-lab preset, e.g. hidden_size=384 on a GPU
MODEL_ARGS=(--model_config altegrad-lab); [ -n "$SENT_MODEL" ] && MODEL_ARGS+=(--config_overrides "$SENT_MODEL")
mkdir -p "$SE"

$PY benchmarks/prepare_data.py sentiment-corpus --data_root "$DATA_ROOT" --out "$OUT/data" \
    --news_lines "$SENT_NEWS_LINES" --novel_lines "$SENT_NOVEL_LINES"
CORPUS=$OUT/data/sentiment-corpus/pretrain.txt
REVIEWS=$OUT/data/sentiment-corpus/reviews.txt

# Reference line: TF-IDF + logistic regression (skipped when scikit-learn is not installed).
step se_tfidf $PY benchmarks/tfidf_baseline.py --data_dir "$CLS" --output_dir "$SE/tfidf" || true

step se_tokenizer $PY tokenizer/train_tokenizer.py --files "$CORPUS" --vocab_size "$SENT_VOCAB" \
    --output_dir "$SE/tokenizer" --no_progress

LM_ARGS=(--objective clm --block_size 128 --per_device_train_batch_size "$SENT_BATCH" --per_device_eval_batch_size 64
         --weight_decay 0.01 --logging_steps 50 "${COMMON_ARGS[@]}")
step se_pretrain $PY recipes/pretrain.py --train_files "$CORPUS" --validation_split_percentage 1 --max_eval_samples 200 \
    --tokenizer_name_or_path "$SE/tokenizer" "${MODEL_ARGS[@]}" --output_dir "$SE/pretrain" \
    --max_steps "$SENT_PRE_STEPS" --learning_rate 1e-3 --lr_scheduler_type cosine --warmup_steps 100 "${LM_ARGS[@]}"
step se_domain $PY recipes/pretrain.py --train_files "$REVIEWS" --validation_split_percentage 5 \
    --model_name_or_path "$SE/pretrain" --output_dir "$SE/domain" --num_train_epochs "$SENT_DOMAIN_EPOCHS" \
    --learning_rate 3e-4 --lr_scheduler_type linear --warmup_steps 20 "${LM_ARGS[@]}"

FT_ARGS=(--data_dir "$CLS" --num_train_epochs "$SENT_EPOCHS" --per_device_train_batch_size 16 --max_seq_length 256
         --per_device_eval_batch_size 64 --lr_scheduler_type linear --warmup_steps 20 --weight_decay 0.01
         --classifier_pooling "$SENT_POOLING" --logging_steps 25 ${SENT_FT_EXTRA:-} "${COMMON_ARGS[@]}")
for seed in $SENT_SEEDS; do
    step "se_scratch_seed$seed" $PY recipes/finetune_sentiment.py --from_scratch --tokenizer_name_or_path "$SE/tokenizer" \
        "${MODEL_ARGS[@]}" --learning_rate 5e-4 --output_dir "$SE/scratch_seed$seed" "${FT_ARGS[@]}" --seed "$seed"
    step "se_pretrained_seed$seed" $PY recipes/finetune_sentiment.py --model_name_or_path "$SE/domain" \
        --learning_rate 3e-4 --output_dir "$SE/pretrained_seed$seed" "${FT_ARGS[@]}" --seed "$seed"
    step "se_frozen_seed$seed" $PY recipes/finetune_sentiment.py --model_name_or_path "$SE/domain" --freeze_backbone \
        --learning_rate 3e-3 --output_dir "$SE/frozen_seed$seed" "${FT_ARGS[@]}" --seed "$seed"
done

runs() { local name=$1 dirs=(); for seed in $SENT_SEEDS; do dirs+=("$SE/${name}_seed$seed"); done; (IFS=,; echo "${dirs[*]}"); }
$PY recipes/plot_sentiment.py --runs scratch="$(runs scratch)" pretrained="$(runs pretrained)" frozen="$(runs frozen)" \
    --output "benchmarks/figures/sentiment_valid_accuracy$FIGURE_SUFFIX.png" \
    --title "CLS-FR books, validation ($PROFILE profile, mean ± std of seeds)"
cp "$SE/pretrain/loss.png" "benchmarks/figures/sentiment_pretrain_loss$FIGURE_SUFFIX.png"
