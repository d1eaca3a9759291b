#!/usr/bin/env bash
# Birthplace (CS224N a5) on the real data: the London baseline, vanilla without pretraining, and vanilla and
# synthesizer pretrained, then finetuned, scored on the real dev set (500 questions) and run on the test questions.
# Run from the repo root:  DATA_ROOT=../shared/data bash benchmarks/birthplace.sh       (PROFILE=cpu | gpu)
#
# Pretraining is causal LM on the opening tokens of each wiki.txt paragraph (where the birth facts are), mixed
# with the training QA pairs (`question ⁇ answer ⁇ </s>`): see BENCHMARKS.md for why, and for the course's
# span-corruption rows (BP_OBJECTIVE=span_corruption). Nothing is chosen on the dev set: 10% of the training
# questions are held out as a tuning split, and every model is scored on it too.
cd "$(dirname "$0")/.."
source benchmarks/common.sh
BP=$OUT/birthplace
REAL=$DATA_ROOT/birthplace
TUNE=$OUT/data/birthplace-tune     # 1,800 training questions + 200 held out for tuning (never the dev set)
case $PROFILE in
    cpu)  # about 56 min on both cores of the 2-core CPU: the two pretrainings take most of it, and the headline
          # vanilla row gets most of those (one epoch is about 34 s; the synthesizer's target is the lower one)
        BP_PRE_EPOCHS=${BP_PRE_EPOCHS:-76}; BP_SYNTH_PRE_EPOCHS=${BP_SYNTH_PRE_EPOCHS:-16}
        BP_BATCH=${BP_BATCH:-32}; BP_MODEL=${BP_MODEL:-}
        BP_VOCAB=${BP_VOCAB:-4000}; BP_OPENING_TOKENS=${BP_OPENING_TOKENS:-40} ;;
    gpu)  # the cs224n-mingpt size, hundreds of epochs, bf16
        BP_PRE_EPOCHS=${BP_PRE_EPOCHS:-300}; BP_SYNTH_PRE_EPOCHS=${BP_SYNTH_PRE_EPOCHS:-300}
        BP_BATCH=${BP_BATCH:-64}; BP_MODEL=${BP_MODEL:-}
        BP_VOCAB=${BP_VOCAB:-4000}; BP_OPENING_TOKENS=${BP_OPENING_TOKENS:-64} ;;
    *) echo "PROFILE must be cpu or gpu, not $PROFILE"; exit 2 ;;
esac
BP_OBJECTIVE=${BP_OBJECTIVE:-openings}
BP_FT_EPOCHS=${BP_FT_EPOCHS:-10}
MODEL_ARGS=(); [ -n "$BP_MODEL" ] && MODEL_ARGS=(--config_overrides "$BP_MODEL")
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

# The course's finetuning stage. After mixed pretraining the model already answers; a short, gentle pass keeps it.
FT_ARGS=(--data_dir "$TUNE" --per_device_train_batch_size 32 --lr_scheduler_type cosine --warmup_steps 20
         --weight_decay 0.1 --logging_steps 20 --block_size 128 --eval_strategy epoch --per_device_eval_batch_size 100
         "${COMMON_ARGS[@]}")
PRE_ARGS=(--data_dir "$TUNE" --pretraining_objective "$BP_OBJECTIVE" --opening_tokens "$BP_OPENING_TOKENS"
          --pretrain_with_qa --block_size 128 --per_device_train_batch_size "$BP_BATCH"
          --learning_rate 1e-3 --adam_beta2 0.95 --weight_decay 0.1 --warmup_steps 100 --max_grad_norm 1.0
          --lr_scheduler_type cosine_with_min_lr --lr_scheduler_kwargs '{"min_lr_rate": 0.1}' --logging_steps 50
          "${MODEL_ARGS[@]}" "${COMMON_ARGS[@]}")

for variant in vanilla synthesizer; do
    if [ $variant = vanilla ]; then
        tok=(--tokenizer_vocab_size "$BP_VOCAB"); epochs=$BP_PRE_EPOCHS
    else
        tok=(--tokenizer_name_or_path "$BP/vanilla_pretrain"); epochs=$BP_SYNTH_PRE_EPOCHS
    fi
    step "bp_${variant}_pretrain" $PY recipes/birthplace.py pretrain --variant $variant "${tok[@]}" \
        --output_dir "$BP/${variant}_pretrain" --num_train_epochs "$epochs" "${PRE_ARGS[@]}"
    step "bp_${variant}_probe" $PY benchmarks/probe_facts.py --data_dir "$REAL" --model_name_or_path "$BP/${variant}_pretrain"
    evaluate_all "bp_${variant}_pretrain" "$BP/${variant}_pretrain"
    step "bp_${variant}_finetune" $PY recipes/birthplace.py finetune --model_name_or_path "$BP/${variant}_pretrain" \
        --output_dir "$BP/${variant}_finetune" --num_train_epochs 2 --learning_rate 1e-4 "${FT_ARGS[@]}"
    evaluate_all "bp_${variant}" "$BP/${variant}_finetune"
    if [ $variant = vanilla ]; then
        # No pretraining: the same model shape and tokenizer, finetuned from random weights.
        step bp_nopretrain_finetune $PY recipes/birthplace.py finetune --variant vanilla \
            --tokenizer_name_or_path "$BP/vanilla_pretrain" "${MODEL_ARGS[@]}" --output_dir "$BP/nopretrain_finetune" \
            --num_train_epochs "$BP_FT_EPOCHS" --learning_rate 1e-3 "${FT_ARGS[@]}"
        evaluate_all bp_nopretrain "$BP/nopretrain_finetune"
    fi
done
$PY benchmarks/plot_birthplace.py --bench_dir "$BP" --output "benchmarks/figures/birthplace_dev_accuracy$FIGURE_SUFFIX.png" || true
cp "$BP/vanilla_pretrain/loss.png" "benchmarks/figures/birthplace_pretrain_loss$FIGURE_SUFFIX.png"
