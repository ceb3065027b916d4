"""Test helpers: upstream chart stand-ins, a local chart repository, manifest validation.

They let the umbrella chart be built, rendered and checked offline, against the upstream
charts' real names, versions, default values and CRDs.
"""
