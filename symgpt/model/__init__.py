"""Models: ``model`` (Model, load, from_config and the table of quantities) and ``hfconfig``
(config.json files read with the families' readers). Presets and readers live with their families
(``symgpt.families``)."""
