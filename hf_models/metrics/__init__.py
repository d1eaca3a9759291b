"""Local `evaluate` metric modules, loaded by path (the Hub is never contacted).

Each sub-folder `NAME/NAME.py` defines one `evaluate.Metric`; use `hf_models.training_utils.load_metric("NAME")`.
"""
