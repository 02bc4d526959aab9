// Replaced when the module's tests are written.
