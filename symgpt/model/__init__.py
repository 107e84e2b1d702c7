"""Models: ``model`` (Model, load, from_config and the table of quantities), presets (data rows
with their public sources) and config.json reading."""
