"""`workgym/toy-examples`: the test environment of the bootstrap (worked-example) learner."""
