"""Documents: what a model's documents show, assembled from the derivations (printed by ``symgpt.render``)."""
