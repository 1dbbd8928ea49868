// Throws while loading: karma reports an error and runs nothing.
throw new Error("the bundle failed to load");
