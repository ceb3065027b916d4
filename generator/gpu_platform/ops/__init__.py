"""Operations on a running platform: ``report`` reads a real Prometheus (through ``promapi``)
and summarises GPU cost and user waits in the ``usage`` figures that ``simulate`` also uses
(``plots`` draws them); ``template`` renders a release (``output_dir`` writes Helm's tree,
``values_url`` reads ``-f https://...``, ``render_cache`` answers a repeated render), ``diff``
compares two renders, and ``apiserver`` reads the API server's addresses for ``values
--discover``.
"""
