from pipelines.proactivebench.build import PROACTIVEBENCH

PROACTIVEBENCH.main()
