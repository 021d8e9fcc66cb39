# Shaped like Debian's TpetraCoreConfig.cmake from libtrilinos-tpetra-dev without
# libtrilinos-epetra-dev: it includes other packages' configs that are not installed.
include("${CMAKE_CURRENT_LIST_DIR}/../TesseraFakeEpetra/TesseraFakeEpetraConfig.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/../TesseraFakeTeuchos/TesseraFakeTeuchosConfig.cmake")
set(TesseraFakeTpetraCore_LIBRARIES fake_tpetra)
