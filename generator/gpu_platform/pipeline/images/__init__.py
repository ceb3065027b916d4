"""Every image the release runs, where each comes from, and how one registry override reaches it.

An air-gapped cluster mirrors a list of images and points the release at the mirror. The list
is the chart's own images (from the values) and the bundled charts' (``slots``: each image
mapping in their values, how their templates compose it and when it runs); ``references``
composes a slot's reference as its chart does; ``listing`` walks the release's values for the
list `gpu-platform images` prints and Chart.yaml's ``artifacthub.io/images`` carries;
``mirror`` writes the repositories and pull secrets ``global.imageRegistry`` and
``global.imagePullSecrets`` do not reach by themselves.
"""
