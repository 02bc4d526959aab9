// Placeholder: the CacheStore module is being built (see the open issues). This file is replaced by the real code.
enum CacheStoreModule {}
