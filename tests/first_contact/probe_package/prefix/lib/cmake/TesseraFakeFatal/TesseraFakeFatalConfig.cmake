# A config that stops whoever loads it.
message(FATAL_ERROR "TesseraFakeFatal is broken on purpose")
