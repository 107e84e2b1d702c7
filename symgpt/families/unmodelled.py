"""transformers' model types symgpt knows of and does not model yet, each with what it would need.

A config.json of one of these types is refused in one line that says what is missing, rather
than "unknown model_type". The list only shrinks: a type leaves it when a family reads it
(tests/test_unmodelled.py checks the two never overlap). Sources: each type's modeling code in
transformers 5.24.0.
"""

from __future__ import annotations

_SHARED = "blocks whose weights are shared by several layers (counted once, run at every use)"
_TOWER = "a vision or audio tower next to the text decoder (images and audio are not modelled yet)"

#: model_type -> what symgpt would need to count it
NOT_MODELLED: dict[str, str] = {
    "dory": f"{_SHARED} (its recurrent loops) and normalised-transformer scalings",
    "hrm_text": f"{_SHARED} (its hierarchical high- and low-level cycles)",
    "longcat_flash": "zero-computation experts, whose forward FLOPs depend on the routing",
    "dots3_note_text": "per-layer overrides of heads and latent ranks (per_layer_config)",
    "deepseek_v4": "hyper-connections around each branch and a compressed-KV attention",
    "hy_v4": "hyper-connections around each branch and a compressed-KV attention",
    "gemma3n_text": "AltUp, LAuReL and activation sparsity",
    "gemma4_unified_assistant": "inputs that are another model's hidden states and keys/values, not token ids",
    "prophetnet": "n-gram prediction streams with bucketed relative positions",
    "xlnet": "two-stream relative attention",
    "zaya": "convolutional query/key projections, residual scaling and an MLP router",
    "inkling_text": "message gates, short convolutions and a relative position bias",
    "inkling2_text": "message gates, short convolutions and a relative position bias",
    "inkling2_loop_text": "message gates, short convolutions, a relative position bias and looped layers",
    "phi4_multimodal": _TOWER, "moss_transcribe_diarize": _TOWER,
    "moshi": "an audio language model's depth decoder over audio codebooks",
    "blt": "byte-level local encoder and decoder and a patcher around the global transformer",
    # image-text-to-text types (their configurations: tests/configs/vlm_zoo/)
    "pi0": "a flow-matching action expert (a second Gemma decoder over the action chunk, reading PaliGemma's "
           "image-and-text prefix cache): its forward takes images, robot state and noise, never token ids alone",
}
