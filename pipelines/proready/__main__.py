from pipelines.proready.build import PROREADY

PROREADY.main()
