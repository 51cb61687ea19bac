"""The engine's benchmarks: dimensions, EM against StepMix, the structure search, the bootstrap, reading data."""
