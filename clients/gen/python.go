package main

func genPython(api *API) ([]byte, []byte) { return nil, nil }
