// Filled in by the bitstream work.
