"""Vision--language models read as a decoder of the generic builder and modules beside it whose
parameters are held (counted, not run; ``blocks/vlm_held.py`` declares them).

- Molmo2 (Allen Institute for AI; transformers' ``Molmo2ForConditionalGeneration``): a Qwen3-style
  decoder (per-head Q/K RMSNorms, pre-norm; ``qk_norm_type`` qwen3, ``norm_after`` false) whose
  token embedding has ``additional_vocab_size`` rows past the head's vocab_size, the vision tower
  ``Molmo2VisionModel`` and the pooling adapter ``Molmo2Adapter``. A forward over token ids runs
  neither (``Molmo2Model``): the decoder's FLOPs are counted, N_img > 0 is refused.
- IDEFICS (Laurençon et al. 2023, the OBELICS paper; ``IdeficsForVisionText2Text``): a LLaMA
  decoder, CLIP's vision tower, an optional Perceiver resampler and gated cross-attention layers
  (Flamingo's, Alayrac et al. 2022) every ``cross_layer_interval`` layers. ``IdeficsModel`` runs the
  cross-attention layers over images in every forward, so only the parameters are modelled: any
  request with a sequence length (FLOPs, memory, time) is refused in one line.
- Evolla (Zhou et al. 2025, "Decoding the Molecular Language of Proteins with Evolla";
  ``EvollaForProteinText2Text``): a LLaMA decoder, a SaProt protein encoder, a sequence-compressor
  resampler and cross-attention adapters every L // aligner_num_add_layers layers. Without a protein
  ``EvollaModel`` runs none of them (each adapter runs only with a protein's keys and values): the
  decoder's FLOPs are counted; the cost of a protein is not modelled.
"""

from __future__ import annotations

from functools import partial

from ..core.errors import SymgptError
from ..core.lazy import Ref
from .base import Extended, Family
from .decoders import CHOICES, FLAG_HELP, FLAGS, OPTIONAL, SIZES
from .fields import Fields, Reader, llama_like, note_leftovers, sub_fields

BUILD = Ref("symgpt.families.blocks.vlm_held", "build")
_EXTRA = {"extra_rows": None, "extra_head_rows": False}
_EXTRA_HELP = {"extra_rows": "rows of the token embedding past vocab_size (additional_vocab_size; none: no "
                             "extra rows; held: the lookup is counted over the V rows)",
               "extra_head_rows": "the head has the extra rows too (IDEFICS's lm_head.additional_fc, untied)"}
_MOLMO2 = {**_EXTRA, "extra_rows": 128, "tower_positions": 729, "tower_heads": 16, "tower_kv_heads": 16,
           "tower_head_dim": 72, "tower_bias": True, "adapter_d": 1152, "adapter_ff": 18944, "adapter_features": 2,
           "adapter_heads": 16, "adapter_kv_heads": 16, "adapter_head_dim": 72, "adapter_bias": True,
           "adapter_mlp_bias": False, "adapter_out": 3584}
_MOLMO2_HELP = {**_EXTRA_HELP,
                "tower_positions": "rows of the vision tower's position table (num_position_embeddings)",
                "tower_heads": "the vision tower's attention heads", "tower_kv_heads": "its key/value heads",
                "tower_head_dim": "its head width (head_dim)", "tower_bias": "its q/k/v/o have biases (attention_bias)",
                "adapter_d": "the adapter's width (adapter_config.hidden_size)",
                "adapter_ff": "the adapter's SwiGLU projector width (intermediate_size)",
                "adapter_features": "ViT layers whose features the pooling concatenates (len(vision_feature_layer))",
                "adapter_heads": "the pooling attention's heads", "adapter_kv_heads": "its key/value heads",
                "adapter_head_dim": "its head width", "adapter_bias": "its q/k/v/o have biases (attention_bias)",
                "adapter_mlp_bias": "the projector's gate/up have biases (mlp_bias)",
                "adapter_out": "the projector's output width (text_hidden_size, as Molmo2ImageProjectorMLP builds it)"}
_IDEFICS = {**_EXTRA, "cross_layers": 32, "cross_heads": 32, "cross_qk_norms": False, "alpha_vector": False, "resampler_depth": None,
            "resampler_heads": 16, "resampler_head_dim": 96, "resampler_latents": 64, "resampler_qk_norms": False}
_IDEFICS_HELP = {**_EXTRA_HELP,
                 "cross_layers": "gated cross-attention layers (num_hidden_layers // cross_layer_interval)",
                 "cross_heads": "their heads (num_attention_heads: the width of the per-head norms)",
                 "cross_qk_norms": "their per-head query/key RMSNorms (qk_layer_norms; the self-attention has none)",
                 "alpha_vector": "each tanh gate is d values (alpha_type vector), not one (float)",
                 "resampler_depth": "blocks of the Perceiver resampler (none: use_resampler false)",
                 "resampler_heads": "the resampler's heads", "resampler_head_dim": "its head width",
                 "resampler_latents": "its latent vectors (resampler_n_latents)",
                 "resampler_qk_norms": "its per-head query/key LayerNorms (qk_layer_norms_perceiver)"}
_VISION = ("d_v", "L_v", "d_ff_v", "P_patch", "C_img", "N_img")
_EVOLLA = {**_EXTRA, "protein_d": 1280, "protein_ff": 5120, "protein_layers": 33, "protein_vocab": 446,
           "protein_positions": None, "protein_norm_before": False, "resampler_depth": 6, "resampler_heads": 8,
           "resampler_head_dim": 64, "resampler_latents": 64, "resampler_ff": 5120, "cross_layers": 8,
           "cross_ff": 16384, "cross_bias": True}
_EVOLLA_HELP = {**_EXTRA_HELP, "protein_d": "the protein encoder's width (protein_encoder_config.hidden_size)",
                "protein_ff": "its MLP width (intermediate_size)", "protein_layers": "its layers",
                "protein_vocab": "its token table's rows (vocab_size)",
                "protein_positions": "rows of its learned position table (position_embedding_type absolute; "
                                     "none: rotary)",
                "protein_norm_before": "a LayerNorm after its token embedding (emb_layer_norm_before)",
                "resampler_depth": "blocks of the sequence-compressor resampler",
                "resampler_heads": "its heads", "resampler_head_dim": "its head width",
                "resampler_latents": "its latent vectors (resampler_num_latents)",
                "resampler_ff": "its feed-forward width (protein width × resampler_ff_mult)",
                "cross_layers": "decoder layers with a sequence-aligner cross-attention adapter",
                "cross_ff": "the adapters' feed-forward width (int(d × aligner_ffn_mult))",
                "cross_bias": "the adapters' out_proj has a bias (aligner_enable_bias)"}


def _family(name, description, changes, added, help_, vision_sizes):
    return Family(name=name, description=description, flags=Extended(FLAGS, changes, added),
                  sizes=SIZES + vision_sizes, optional=OPTIONAL, build=partial(BUILD, name=name),
                  flag_help=Extended(FLAG_HELP, added=help_), choices=Extended(CHOICES))


FAMILIES = (
    _family("molmo2", "Molmo2: a Qwen3-style decoder, a SigLIP-style vision tower and an attention-pooling adapter "
            "(held: a forward over token ids runs neither)", dict(gqa=True, qk_norm="head"), _MOLMO2, _MOLMO2_HELP,
            _VISION),
    _family("idefics", "IDEFICS: a LLaMA decoder with gated cross-attention layers onto a CLIP tower through an "
            "optional Perceiver resampler (parameters only)", {}, _IDEFICS, _IDEFICS_HELP, _VISION + ("S_img",)),
    _family("evolla", "Evolla: a LLaMA decoder with cross-attention adapters onto a protein encoder through a "
            "resampler (held: a forward without a protein runs neither)", {}, _EVOLLA, _EVOLLA_HELP, ()),
)

_SILENT = ("initializer_range", "id2label", "label2id", "model_type", "attention_dropout", "layer_norm_eps",
           "rms_norm_eps", "rope_parameters", "use_cache", "pad_token_id", "bos_token_id", "eos_token_id")


def _heads(v: Fields, d_key: str, defaults: tuple) -> tuple[int, int, int]:
    d, h = v.int(d_key, defaults[0]), v.int("num_attention_heads", defaults[1])
    kv, dh = v.int("num_key_value_heads", h), v.int("head_dim", d // h)
    if h % kv:
        raise SymgptError(f"{v.where}: num_attention_heads must be a multiple of num_key_value_heads")
    return h, kv, dh


def read_molmo2(f: Fields):
    """transformers' Molmo2Config: text_config (Molmo2TextConfig), vision_config, adapter_config."""
    t = sub_fields(f, "text_config")
    if t.str("qk_norm_type", "qwen3") != "qwen3" or t.bool("norm_after", False):
        raise SymgptError(f"{f.where}: a Molmo2 text model with qk_norm_type other than qwen3 or norm_after true "
                          "is not modelled")
    flags, sizes = llama_like(t, dict(V=151936, d=4096, d_ff=12288, L=36, h=32, h_kv=8, T_max=36864, head_dim=128))
    bias = t.bool("attention_bias", False)
    flags.update(qkv_bias=bias, qk_norm="head", tied=False, extra_rows=t.int("additional_vocab_size", 128, minimum=0) or None)
    t.silent("rope_scaling_layers", "tie_word_embeddings", *_SILENT)  # RoPE types change no count
    note_leftovers(f, t, "text_config")
    v = sub_fields(f, "vision_config")
    size, _ = v.get("image_size", [378, 378])
    if isinstance(size, list) and len(size) != 2:
        raise SymgptError(f"{v.where}: field 'image_size' must be a pair")
    sizes.update(d_v=v.int("hidden_size", 1152), L_v=v.int("num_hidden_layers", 25),
                 d_ff_v=v.int("intermediate_size", 4304), P_patch=v.int("patch_size", 14),
                 C_img=v.int("num_channels", 3), N_img=0)
    h, kv, dh = _heads(v, "hidden_size", (1152, 16))
    flags.update(tower_positions=v.int("num_position_embeddings", 729), tower_heads=h, tower_kv_heads=kv,
                 tower_head_dim=dh, tower_bias=v.bool("attention_bias", True))
    v.silent("hidden_act", *_SILENT)
    note_leftovers(f, v, "vision_config")
    a = sub_fields(f, "adapter_config")
    h, kv, dh = _heads(a, "hidden_size", (1152, 16))
    feats, _ = a.get("vision_feature_layer", [-3, -9])
    if not isinstance(feats, list) or not feats:
        raise SymgptError(f"{a.where}: field 'vision_feature_layer' must be a non-empty list")
    flags.update(adapter_d=a.int("hidden_size", 1152), adapter_ff=a.int("intermediate_size", 18944),
                 adapter_features=len(feats), adapter_heads=h, adapter_kv_heads=kv, adapter_head_dim=dh,
                 adapter_bias=a.bool("attention_bias", True), adapter_mlp_bias=a.bool("mlp_bias", False))
    flags["adapter_out"] = a.int("text_hidden_size", 3584)  # the projector's output width, as the class builds it
    a.silent("hidden_act", *_SILENT)
    note_leftovers(f, a, "adapter_config")
    f.silent("tie_word_embeddings", "initializer_range", "image_patch_id", *(k for k in f.cfg if k.endswith("_token_id")))
    f.notes.append("the forward counted is over token ids: transformers runs neither the vision tower nor the "
                   "adapter (their parameters are counted); the cost of an image is not modelled")
    return "molmo2", flags, sizes


def read_idefics(f: Fields):
    """transformers' IdeficsConfig: LLaMA's fields at the top level, vision_config, perceiver_config."""
    flags, sizes = llama_like(f, dict(V=32000, d=4096, d_ff=11008, L=32, h=32, T_max=2048))
    extra = f.int("additional_vocab_size", 0, minimum=0)
    flags.update(extra_rows=extra or None, extra_head_rows=bool(extra) and not flags["tied"],
                 cross_qk_norms=f.bool("qk_layer_norms", False), cross_heads=sizes["h"])
    interval = f.int("cross_layer_interval", 1)
    flags["cross_layers"] = sizes["L"] // interval
    alpha = f.str("alpha_type", "float")
    if alpha not in ("float", "vector") or f.str("alpha_initializer", "zeros") not in (
            "zeros", "ones", "normal", "gaussian", "random"):
        raise SymgptError(f"{f.where}: alpha_type must be float or vector, alpha_initializer zeros, ones or normal")
    flags["alpha_vector"] = alpha == "vector"
    v = sub_fields(f, "vision_config")
    sizes.update(d_v=v.int("embed_dim", 768), L_v=v.int("num_hidden_layers", 32), d_ff_v=v.int("intermediate_size", 5120),
                 S_img=v.int("image_size", 224), P_patch=v.int("patch_size", 14), C_img=v.int("num_channels", 3),
                 N_img=0)
    if sizes["d_v"] % v.int("num_attention_heads", 16):
        raise SymgptError(f"{v.where}: embed_dim must be a multiple of num_attention_heads")
    v.silent("hidden_act", "initializer_factor", "vision_model_name", *_SILENT)
    note_leftovers(f, v, "vision_config")
    p = sub_fields(f, "perceiver_config")
    use = f.bool("use_resampler", False)
    depth = p.int("resampler_depth", 6)
    flags.update(resampler_depth=depth if use else None, resampler_heads=p.int("resampler_n_heads", 16),
                 resampler_head_dim=p.int("resampler_head_dim", 96), resampler_latents=p.int("resampler_n_latents", 64),
                 resampler_qk_norms=p.bool("qk_layer_norms_perceiver", False))
    p.silent("use_resampler", *_SILENT)  # the model reads the top-level use_resampler
    note_leftovers(f, p, "perceiver_config")
    f.silent("alphas_initializer_range", "dropout", "freeze_lm_head", "freeze_text_layers",
             "freeze_text_module_exceptions", "freeze_vision_layers", "freeze_vision_module_exceptions",
             *_SILENT)
    f.notes.append(f"parameters only: IdeficsModel runs its {flags['cross_layers']} gated cross-attention layers over "
                   "images in every forward, and that forward is not modelled (a request with T is refused)")
    return "idefics", flags, sizes


def read_evolla(f: Fields):
    """transformers' EvollaConfig: LLaMA's fields at the top level, protein_encoder_config (SaProtConfig)."""
    flags, sizes = llama_like(f, dict(V=128256, d=4096, d_ff=14336, L=32, h=32, h_kv=8, T_max=8192))
    bias = f.bool("attention_bias", False)
    flags.update(qkv_bias=bias, proj_bias=bias, mlp_bias=f.bool("mlp_bias", False), tied=False)
    L, every = sizes["L"], max(sizes["L"] // f.int("aligner_num_add_layers", 8), 1)
    mult = f.int("aligner_ffn_mult", 4)
    flags.update(cross_layers=L // every, cross_ff=sizes["d"] * mult, cross_bias=f.bool("aligner_enable_bias", True))
    p = sub_fields(f, "protein_encoder_config")
    if p.bool("add_cross_attention", False):
        raise SymgptError(f"{p.where}: a protein encoder with cross-attention is not modelled")
    kind = p.str("position_embedding_type", "rotary")
    if kind not in ("rotary", "absolute"):
        raise SymgptError(f"{p.where}: position_embedding_type {kind[:30]!r} is not modelled")
    dp = p.int("hidden_size", 1280)
    if dp % p.int("num_attention_heads", 20):
        raise SymgptError(f"{p.where}: hidden_size must be a multiple of num_attention_heads")
    flags.update(protein_d=dp, protein_ff=p.int("intermediate_size", 5120), protein_layers=p.int("num_hidden_layers", 33),
                 protein_vocab=p.int("vocab_size", 446), protein_norm_before=p.bool("emb_layer_norm_before", False),
                 protein_positions=p.int("max_position_embeddings", 1026) if kind == "absolute" else None)
    p.silent("max_position_embeddings", "rope_theta", "token_dropout", "mask_token_id", "is_decoder",
             "hidden_dropout_prob", "attention_probs_dropout_prob", *_SILENT)
    note_leftovers(f, p, "protein_encoder_config")
    flags.update(resampler_depth=f.int("resampler_depth", 6), resampler_heads=f.int("resampler_heads", 8),
                 resampler_head_dim=f.int("resampler_dim_head", 64), resampler_latents=f.int("resampler_num_latents", 64),
                 resampler_ff=dp * f.int("resampler_ff_mult", 4))
    f.silent("aligner_attention_probs_dropout_prob", "is_decoder", "add_cross_attention", "tie_word_embeddings",
             *_SILENT)
    f.notes.append("the forward counted is over token ids, without a protein: transformers then runs neither the "
                   "protein encoder, nor the resampler, nor the cross-attention adapters (their parameters are "
                   "counted); the cost of a protein is not modelled")
    return "evolla", flags, sizes


READERS = {"molmo2": Reader(read_molmo2, ("Molmo2ForConditionalGeneration",)),
           "idefics": Reader(read_idefics, ("IdeficsForVisionText2Text",)),
           "evolla": Reader(read_evolla, ("EvollaForProteinText2Text",))}
PRESETS: tuple = ()
