#!/usr/bin/env bash
# Birthplace (CS224N a5) on the real data: London baseline, vanilla without pretraining, vanilla and
# synthesizer pretrained with span corruption on wiki.txt (+ the tuning-train QA pairs), then finetuned.
# Run from the repo root:  DATA_ROOT=../shared/data bash benchmarks/birthplace.sh
# CPU-sized by default (see BENCHMARKS.md); a GPU run would raise BP_PRE_EPOCHS and the model size.
cd "$(dirname "$0")/.."
source benchmarks/common.sh
BP=$OUT/birthplace
REAL=$DATA_ROOT/birthplace
TUNE=$OUT/data/birthplace-tune     # 1,800 training questions + 200 held out for tuning (never the dev set)
BP_PRE_EPOCHS=${BP_PRE_EPOCHS:-12}
BP_FT_EPOCHS=${BP_FT_EPOCHS:-10}
BP_MODEL=${BP_MODEL:-hidden_size=128,num_hidden_layers=2,num_attention_heads=4,intermediate_size=512}
BP_VOCAB=${BP_VOCAB:-2000}
mkdir -p "$BP"

$PY benchmarks/prepare_data.py birthplace-tune --data_root "$DATA_ROOT" --out "$OUT/data"

step bp_london $PY recipes/birthplace.py evaluate --data_dir "$REAL" --london_baseline --output_dir "$BP/london" "${COMMON_ARGS[@]}"

evaluate_all() {  # evaluate MODEL_DIR on the tuning split, the real dev set, and the test questions
    local name=$1 dir=$2
    step "${name}_eval_tune" $PY recipes/birthplace.py evaluate --data_dir "$TUNE" --eval_split validation \
        --model_name_or_path "$dir" --output_dir "$dir/eval_tune" --per_device_eval_batch_size 100 "${COMMON_ARGS[@]}"
    step "${name}_eval_dev" $PY recipes/birthplace.py evaluate --data_dir "$REAL" --eval_split validation \
        --model_name_or_path "$dir" --output_dir "$dir" --per_device_eval_batch_size 100 "${COMMON_ARGS[@]}"
    step "${name}_eval_test" $PY recipes/birthplace.py evaluate --data_dir "$REAL" --eval_split test \
        --model_name_or_path "$dir" --output_dir "$dir" --per_device_eval_batch_size 100 "${COMMON_ARGS[@]}"
}

FT_ARGS=(--data_dir "$TUNE" --num_train_epochs "$BP_FT_EPOCHS" --per_device_train_batch_size 32 --learning_rate 1e-3
         --lr_scheduler_type cosine --warmup_steps 20 --weight_decay 0.1 --logging_steps 20 --block_size 128
         --eval_strategy epoch --per_device_eval_batch_size 100 "${COMMON_ARGS[@]}")

for variant in vanilla synthesizer; do
    step "bp_${variant}_pretrain" $PY recipes/birthplace.py pretrain --variant $variant --data_dir "$TUNE" \
        --pretrain_with_qa --tokenizer_vocab_size "$BP_VOCAB" --config_overrides "$BP_MODEL" --block_size 128 \
        --output_dir "$BP/${variant}_pretrain" --num_train_epochs "$BP_PRE_EPOCHS" --per_device_train_batch_size 64 \
        --learning_rate 2e-3 --lr_scheduler_type cosine --warmup_steps 30 --weight_decay 0.1 --logging_steps 20 "${COMMON_ARGS[@]}"
    step "bp_${variant}_finetune" $PY recipes/birthplace.py finetune --model_name_or_path "$BP/${variant}_pretrain" \
        --output_dir "$BP/${variant}_finetune" "${FT_ARGS[@]}"
    evaluate_all "bp_${variant}" "$BP/${variant}_finetune"
    if [ $variant = vanilla ]; then
        # No pretraining: the same model shape and tokenizer, finetuned from random weights.
        step bp_nopretrain_finetune $PY recipes/birthplace.py finetune --variant vanilla \
            --tokenizer_name_or_path "$BP/vanilla_pretrain" --config_overrides "$BP_MODEL" \
            --output_dir "$BP/nopretrain_finetune" "${FT_ARGS[@]}"
        evaluate_all bp_nopretrain "$BP/nopretrain_finetune"
    fi
done
$PY benchmarks/plot_birthplace.py --bench_dir "$BP" --output benchmarks/figures/birthplace_dev_accuracy.png || true
