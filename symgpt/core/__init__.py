"""The vocabulary every layer speaks: errors, symbols, safe expression parsing, numbers as text,
counting conventions, notation, hardware profiles, files and folders, the derivation cache, lazy
references and the table of symgpt's import layers. Nothing here imports another package of
symgpt."""
