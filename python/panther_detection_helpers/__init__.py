# panther_detection_helpers, as rules import it: the `caching` module over an in-memory store that
# the runner empties before every test (Panther's package talks to DynamoDB; tests never should).
