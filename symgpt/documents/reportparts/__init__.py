"""The parts of ``symgpt report``: each module has ``write(model, folder, **options) -> [names]``."""
