"""Independent oracles for symgpt's tests.

Nothing here imports symgpt: these modules build and measure real PyTorch
(and HuggingFace) models so tests can compare symgpt's symbolic predictions
against ground truth.

- ``torch_gpt2``: a small from-scratch GPT-2 (nanoGPT style).
- ``measure``: parameter / shape / FLOP / saved-activation measurements.
"""
