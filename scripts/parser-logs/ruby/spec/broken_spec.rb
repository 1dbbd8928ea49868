# Fails to load: an error outside of any example.
require "does_not_exist"
