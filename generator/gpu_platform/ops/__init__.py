"""Operations on a running platform: ``report`` reads a real Prometheus (through ``promapi``)
and summarises GPU cost and user waits in the ``usage`` figures that ``simulate`` also uses.
"""
