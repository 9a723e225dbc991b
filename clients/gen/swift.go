package main

func genSwift(api *API) ([]byte, []byte) { return nil, nil }
