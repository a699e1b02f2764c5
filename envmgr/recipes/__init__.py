"""Build recipes: recipe.py (templates/recipes/*.toml and the user's, parsed and applied: what a CUDA
package's build needs on top of the snapshot) and context.py (what a recipe reads from the machine through the
Host: GPUs, ninja, BuildCustomizations, TEMP).

May import the vocabulary, files/, host/, discover/ and snapshot/."""
