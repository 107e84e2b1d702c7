"""The builders families share: functions that declare a graph on the op catalog
(``symgpt.graph.arch.Builder``) from a family's flags. A family module (``symgpt.families.<name>``)
names its builder lazily (``symgpt.core.lazy.Ref``), so nothing here is imported, and no SymPy,
until a graph is built.

``decoder`` (the generic decoder-only Transformer, with ``decoder_flags`` and ``decoder_layers``),
``stacks`` (layers that differ, as stacks), ``gpt2`` (the decoder under GPT-2's flag vocabulary),
``mla`` (DeepSeek's multi-latent attention), ``encoder_layers`` (the attention and FFN the encoders
and encoder--decoders share), ``bert``, ``t5``, ``bart`` and ``vit``.
"""
