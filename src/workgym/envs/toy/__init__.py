"""The toy shop: the smallest complete environment, used by the README and the self-tests."""
