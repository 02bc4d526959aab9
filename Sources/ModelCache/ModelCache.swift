// Placeholder: the ModelCache module is being built (see the open issues). This file is replaced by the real code.
enum ModelCacheModule {}
