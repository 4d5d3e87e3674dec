"""The statistics: one resampling engine, calibrated tests, aggregation and the baseline comparison.

Pure computation: nothing here reads the environment, the file system or the network.
"""
