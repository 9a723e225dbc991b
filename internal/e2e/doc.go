// Package e2e holds end-to-end tests: the whole service over HTTP on a real
// database, driven the way clients and people use it.
package e2e
