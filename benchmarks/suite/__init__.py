"""The test suite's tooling: the CPU seconds a set of test files costs, by program."""
