# A config that loads and declines, as find_dependency does when a dependency is missing.
set(TesseraFakeUnusable_FOUND FALSE)
set(TesseraFakeUnusable_NOT_FOUND_MESSAGE "its dependency TesseraNothing could not be found")
